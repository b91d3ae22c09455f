// ParseSshPublicKey (services/git/ssh_public_key.h) over keys `ssh-keygen` made, with the
// fingerprints `ssh-keygen -lf` printed for them, and over what users paste by mistake.

#include "services/git/ssh_public_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/base64.h"

namespace hangar::services {
namespace {

using ::testing::HasSubstr;

// Made with `ssh-keygen -t <type> -N ''` (OpenSSH 9.2); the fingerprints are `ssh-keygen
// -lf` of each .pub.
struct Known {
  const char* line;
  const char* type;
  const char* fingerprint;
  const char* comment;
  int bits;
};
const Known kKeys[] = {
    {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe ann@laptop",
     "ssh-ed25519", "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo", "ann@laptop", 256},
    {"ecdsa-sha2-nistp256 "
     "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBDPaw5Fp1uEccdJCXyR+gMWH9DkMNp1pyfYtaBrZ"
     "C1snzeoOZD4N4gw3QIQAHSrgE3j+J7CMLmw8r7umIcc86/Q= ecdsa256",
     "ecdsa-sha2-nistp256", "SHA256:tyGQePKOZ8vy3lcY9C37t1FA2v5mGFcA0hisvexdtNU", "ecdsa256", 256},
    {"ecdsa-sha2-nistp384 "
     "AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBJtaiJaLudriaZbJ/SFzCDakyZuxwEq85CQeGWBq"
     "pOwwp0HzSfSIVJsgHje06y4VJP/gstacaYKuUDyyCuhWpu9JReRbK6VjumP94tob8vbrKed/"
     "rthjbYmJsIFRe8KN0g== ",
     "ecdsa-sha2-nistp384", "SHA256:zB0leQKXHpGVMmS7tUnCo0bBwgG7twuxtOJz4DpE3E0", "", 384},
    {"ecdsa-sha2-nistp521 "
     "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBABZPYV2bLb9GyrtL5e66vcCSdpe/xTYUkg+F0EI"
     "WOysgKAoI3hM4yLwxtjiomtq3ItTKq2dD1eKHbnJ2f7dm+8TIwBtiBIxOYTLE8P64y57geSXMI6RPrJhn49dfqdURWf9"
     "30JbgvzlqS1uGXzCLP8BkBoRxjpRFbwmbjPjHrIanqRHoQ== e521",
     "ecdsa-sha2-nistp521", "SHA256:ohNw//I86krTQTrgx79c9901e7/Yj+oZ8CCYzDQUAC4", "e521", 521},
    {"ssh-rsa "
     "AAAAB3NzaC1yc2EAAAADAQABAAABAQCzFRM1L/jMYSdzDmBtusTIN7xHn8muy7ehPh8ghaddg/IC9KkddtdaoFdyNjwL"
     "h/1i0QZBo8rr8AkWZPq77x2cLI0xE67HY7HnU1g57ozzHC8d0EYAeX9v8cuU3M3X9jDj3P+jWr07NF+lp+Im1KI7T9zz"
     "7r71rHxNW62/YO+82E51ONmf4hYf4ewHKiebF8aG70OHFC2NpS91y4xOZOGYXW1klRV/JDsXfHsAxF46UglUB6f/ORlP"
     "bofNhRslUVEz6mKgafpSWMVf8ZF8y2rDHOPKNPDltmZ+65owBY5jlVexVi8NUZfip1Ne09Q17wrwSh4I19EIsURcjDDW"
     "zZfJ rsa 2048 key",
     "ssh-rsa", "SHA256:NshDFcSJgt1FrxDFCIP7Ur+9CXKWWho5dvTrnBdxFYs", "rsa 2048 key", 2048},
    {"ssh-rsa "
     "AAAAB3NzaC1yc2EAAAADAQABAAACAQC4X0FUcrfD4o4GuZ8YzJtJejKxhlrPpW/Hmrs/Cd/20wCmrpOFSREUHUQ1iMlP"
     "LdItoFRcSAEi33ufzQOE33sb5pAyeuH6+b1UFi+cXArCB/kQykqL4feyV4C0MAYOPjjsGqw7yR5pVHhg6uzl4YW0QGuf"
     "mXMJrFx4U+bbZQ3xwl/2M/yxriL+IkkTOMdXiLR2TyRvCNG4iD4eNJRqoMHeyYjqVKIqusSRA1gv/YC4OVElQz5gzAIK"
     "f3zbJhPPo/+zKNgy8Whl1RjCxhzunMFyzGQV2ZpIob1q4Kp+HQOVRAQK9QtdqSgcKajvdDaFeYnz+9pAxyJnYYCugcWf"
     "3915soG5XbbpfDfHxkLdwgmFnChFfsnkngNcYAwENE+59YiPB+xG9+iwTSYQAtwpFH5geZRdIMxZh2M/Vp0Rew6D3Waz"
     "iGzchNvlQcoyxCqDy0YbbeU4zQ+Ac2+ll1n3wgEBWHlMlQj1Q3/Y0lc4AqNdNh/HTe48e/Yb1+1Y7T+0NKF0r3mzjFsE"
     "d6x7ARqjjIR1EFBAEbM7Q4Hx54iiA5eFyinQPjVD4/9BlBLHfg50N2+VB51IUTeiXkmjlQ91CsELo90mR8pQJolLpLVp"
     "e9ZqFAdkNhTTn4DfCMa4ZaBseOAtsQZNXsg4BQzgfjTnotbgTJQWXD3uVh+3x93e3ti5qQ== rsa4096",
     "ssh-rsa", "SHA256:wHHZMhxyoaGVNVVTwZasHfk428O73UT3y753q2T35vk", "rsa4096", 4096},
    // Security keys: blobs built by hand (no token at hand), fingerprints by `ssh-keygen -lf`.
    {"sk-ssh-ed25519@openssh.com "
     "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gAAAA"
     "BHNzaDo= yubi",
     "sk-ssh-ed25519@openssh.com", "SHA256:nX0hpi5mKbTIJ10yBq5/sLQhiI1Y0RBAqN0drDdgJWs", "yubi",
     256},
    {"sk-ecdsa-sha2-nistp256@openssh.com "
     "AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBDPaw5Fp1uEccdJCXyR+"
     "gMWH9DkMNp1pyfYtaBrZC1snzeoOZD4N4gw3QIQAHSrgE3j+J7CMLmw8r7umIcc86/QAAAAEc3NoOg== yubi2",
     "sk-ecdsa-sha2-nistp256@openssh.com", "SHA256:2QxNOI3B+IsErD20+n3hV20zwH+ZAlTbQIYo8fuChSo",
     "yubi2", 256},
};

constexpr const char kRsa1024[] =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDRCMRHZ15it3yiZ2iAWGccoZe6mczIF9hhWSHr9Jvxgpo5w5IzyuKP2Uk/0xsi"
    "cYFJlaErgQAseeYSRvJ8+aILvAlpwGqruJKqV6ilM6NtwJ36vS33yifQ08SAhxNWmb5t8IijFBmI88Or/cHg8yEY/k3N"
    "jP4CfRS5i7usaVPl3w== small";
constexpr const char kDsa[] =
    "ssh-dss "
    "AAAAB3NzaC1kc3MAAACBAJGSQksKlJr2vGIzbducYgQnhNpjrxBdmPUz54rYu+pPtOrvD7H/0lq16VVGvaW5I1u0+saP"
    "CZpAb4XhZEFfE2OBr3DhphDJ8QoEK8mMHn0tSGfVp6osk212NFP8L8O3O6FaZcxzULTK04s1oyD/Ezh+HLgXGvbtgNF2"
    "RMKOXyYLAAAAFQDC4z51CzEGOTLru97ytyhmwo/u3wAAAIA57zql+eoLF9+TRFoPbYdGwLIUa3a6mbNGH/hYLxkghjGl"
    "S8qvz9FgGQoUXkOKNYQUer7wKyMggxhXxRXTScGwXUILA039XEfmAa8ZjlHVjs7+01F9ZjAQmNOW831/sRfzF8PlhL7f"
    "zBmjjAOvHCByKvBChSjcK81qtZo6VbxMcAAAAIAgSjlyxKPACBx4QMhADK7+ltuMRzj8zirGpB9yTBigMOcQA6+qL5ER"
    "9Zd4NE5ixUcj0tW/3n0AnsoPPxw0UpQfKFExaGbQ3fDV4fWGKGgYhoXbSn8hEhjgTkYQKQEtS7uSaJvzsIPOXswOmg/Z"
    "1eaOYmJQzYIi/L3D6PAEbgk8dA== root@vm";
constexpr const char kEd25519Blob[] =
    "AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe";

// The SSH wire string of `s` (uint32 big-endian length, then the bytes).
std::string Wire(std::string_view s) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((s.size() >> (24 - 8 * i)) & 0xff);
  return out.append(s);
}

std::string Line(std::string_view type, std::string_view blob) {
  return std::string(type) + " " + Base64Encode(blob) + " crafted";
}

std::string Message(std::string_view line) {
  auto r = ParseSshPublicKey(line);
  EXPECT_FALSE(r.has_value()) << line;
  if (r) return "";
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  return r.error().message;
}

TEST(SshPublicKey, ParsesEveryKindWithSshKeygensFingerprint) {
  for (const Known& k : kKeys) {
    SCOPED_TRACE(k.type);
    auto key = ParseSshPublicKey(k.line);
    ASSERT_TRUE(key.has_value()) << key.error().message;
    EXPECT_EQ(key->type, k.type);
    EXPECT_EQ(key->fingerprint, k.fingerprint);
    EXPECT_EQ(key->comment, k.comment);
    EXPECT_EQ(key->bits, k.bits);
    std::string_view line = k.line;
    EXPECT_EQ(line.substr(key->type.size() + 1, key->blob_base64.size()), key->blob_base64);
  }
}

TEST(SshPublicKey, ToleratesBlanksAndLineEnds) {
  auto key =
      ParseSshPublicKey("  ssh-ed25519\t" + std::string(kEd25519Blob) + "   my  laptop \r\n");
  ASSERT_TRUE(key.has_value()) << key.error().message;
  EXPECT_EQ(key->comment, "my  laptop");
  EXPECT_EQ(key->fingerprint, "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo");
  EXPECT_TRUE(ParseSshPublicKey("ssh-ed25519 " + std::string(kEd25519Blob)).has_value());
}

TEST(SshPublicKey, BlobIsStoredCanonically) {
  // Without its padding the blob decodes the same; it is kept padded, as sshd's %k is.
  std::string ecdsa = kKeys[1].line;
  size_t pad = ecdsa.find("= ");
  ASSERT_NE(pad, std::string::npos);
  auto key = ParseSshPublicKey(ecdsa.substr(0, pad) + ecdsa.substr(pad + 1));
  ASSERT_TRUE(key.has_value()) << key.error().message;
  EXPECT_TRUE(key->blob_base64.ends_with("="));
  EXPECT_EQ(key->fingerprint, kKeys[1].fingerprint);
}

TEST(SshPublicKey, RefusesPrivateKeys) {
  EXPECT_EQ(Message("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n"
                    "-----END OPENSSH PRIVATE KEY-----\n"),
            "this is a private key; paste the .pub file");
  EXPECT_EQ(Message("-----BEGIN RSA PRIVATE KEY-----\nMIIEow==\n-----END RSA PRIVATE KEY-----"),
            "this is a private key; paste the .pub file");
  EXPECT_EQ(Message("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"),
            "this is a private key; paste the .pub file");
  EXPECT_THAT(Message("---- BEGIN SSH2 PUBLIC KEY ----\nAAAA\n---- END SSH2 PUBLIC KEY ----"),
              HasSubstr("ssh-keygen -i"));
}

TEST(SshPublicKey, RefusesWeakAndUnsupportedKeys) {
  EXPECT_EQ(Message(kRsa1024), "RSA keys must have at least 2048 bits (this one has 1024)");
  EXPECT_THAT(Message(kDsa), HasSubstr("unsupported key type 'ssh-dss'"));
  // A certificate is a type of its own (its blob names it), not a key.
  std::string cert = Wire("ssh-ed25519-cert-v01@openssh.com") + Wire("nonce");
  EXPECT_THAT(Message(Line("ssh-ed25519-cert-v01@openssh.com", cert)),
              HasSubstr("unsupported key type 'ssh-ed25519-cert-v01@openssh.com'"));
}

TEST(SshPublicKey, RefusesWhatIsNoKey) {
  EXPECT_EQ(Message(""), "no key given");
  EXPECT_EQ(Message(" \r\n"), "no key given");
  EXPECT_THAT(Message("hello"), HasSubstr("not an OpenSSH public key"));
  EXPECT_THAT(Message("hello world"), HasSubstr("not an OpenSSH public key"));
  EXPECT_THAT(Message("ssh-ed25519 not*base64"), HasSubstr("not an OpenSSH public key"));
  // authorized_keys options are sshd's business, never a user's.
  EXPECT_THAT(Message("no-pty ssh-ed25519 " + std::string(kEd25519Blob)),
              HasSubstr("not an OpenSSH public key"));
  // Two keys at once.
  EXPECT_EQ(Message(std::string(kKeys[0].line) + "\n" + kKeys[1].line),
            "one key at a time: the key is one line");
}

TEST(SshPublicKey, RefusesBlobsThatDoNotMatchTheirType) {
  // The line's type and the blob's differ.
  EXPECT_EQ(Message("ssh-rsa " + std::string(kEd25519Blob)), "key blob does not match its type");
  std::string key32(32, 'k');
  // Ed25519 keys are 32 bytes.
  EXPECT_EQ(Message(Line("ssh-ed25519", Wire("ssh-ed25519") + Wire(std::string(31, 'k')))),
            "key blob does not match its type");
  // A length running past the blob.
  std::string cut = Wire("ssh-ed25519") + Wire(key32);
  cut.pop_back();
  EXPECT_EQ(Message(Line("ssh-ed25519", cut)), "key blob does not match its type");
  // Trailing bytes.
  EXPECT_EQ(Message(Line("ssh-ed25519", Wire("ssh-ed25519") + Wire(key32) + "x")),
            "key blob has bytes after its fields");
  // ECDSA: the curve must be the type's; the point uncompressed, of the curve's length.
  std::string point(65, 'p');
  point[0] = 0x04;
  EXPECT_TRUE(ParseSshPublicKey(Line("ecdsa-sha2-nistp256",
                                     Wire("ecdsa-sha2-nistp256") + Wire("nistp256") + Wire(point)))
                  .has_value());
  EXPECT_EQ(Message(Line("ecdsa-sha2-nistp256",
                         Wire("ecdsa-sha2-nistp256") + Wire("nistp384") + Wire(point))),
            "key blob does not match its type");
  EXPECT_EQ(Message(Line("ecdsa-sha2-nistp384",
                         Wire("ecdsa-sha2-nistp384") + Wire("nistp384") + Wire(point))),
            "key blob does not match its type");
  std::string compressed(33, 'p');
  compressed[0] = 0x02;
  EXPECT_EQ(Message(Line("ecdsa-sha2-nistp256",
                         Wire("ecdsa-sha2-nistp256") + Wire("nistp256") + Wire(compressed))),
            "key blob does not match its type");
  // Security keys carry their application; plain keys must not.
  EXPECT_EQ(
      Message(Line("sk-ssh-ed25519@openssh.com", Wire("sk-ssh-ed25519@openssh.com") + Wire(key32))),
      "key blob does not match its type");
  EXPECT_EQ(Message(Line("ssh-ed25519", Wire("ssh-ed25519") + Wire(key32) + Wire("ssh:"))),
            "key blob has bytes after its fields");
}

TEST(SshPublicKey, RefusesMalformedRsaNumbers) {
  std::string n(256, '\xab');
  n.insert(n.begin(), '\0');  // 2048 bits, positive
  const std::string e65537("\x01\x00\x01", 3), even("\x01\x00\x00", 3);
  auto rsa = [&](std::string_view e, std::string_view modulus) {
    return Line("ssh-rsa", Wire("ssh-rsa") + Wire(e) + Wire(modulus));
  };
  EXPECT_TRUE(ParseSshPublicKey(rsa(e65537, n)).has_value());
  EXPECT_EQ(Message(rsa(e65537, n.substr(1))), "key blob does not match its type");  // < 0
  EXPECT_EQ(Message(rsa(e65537, std::string(1, '\0') + n)),
            "key blob does not match its type");                         // superfluous zero byte
  EXPECT_EQ(Message(rsa("", n)), "key blob does not match its type");    // e = 0
  EXPECT_EQ(Message(rsa(even, n)), "key blob does not match its type");  // e even
  EXPECT_EQ(Message(rsa(std::string(1, '\x01'), n)), "key blob does not match its type");  // 1
  std::string big(1025, '\x7f');  // 8200 bits
  EXPECT_EQ(Message(rsa(e65537, big)), "RSA keys may have at most 8192 bits");
}

TEST(SshPublicKey, RefusesLongInput) {
  std::string line = std::string(kKeys[0].line) + " " + std::string(16384, 'c');
  EXPECT_EQ(Message(line), "key is longer than 16384 bytes");
}

}  // namespace
}  // namespace hangar::services

#include "services/git/ssh_public_key.h"

#include <cstdint>
#include <optional>

#include "core/base64.h"
#include "core/sha256.h"

namespace hangar::services {
namespace {

// OpenSSH's own bound on a public key it reads (SSH_MAX_PUBKEY_BYTES): far above the
// largest supported key (16384-bit RSA, about 2.8 KiB of base64).
constexpr size_t kMaxLineBytes = 16384;
// RSA moduli: at least 2048 bits (smaller ones are within reach of factoring), at most 8192
// bits: the stored blob is then at most ~1.4 KiB of base64, which the ssh_keys_blob index
// can hold on PostgreSQL (a B-tree entry is bounded near 2.7 KiB; migration 14).
constexpr int kMinRsaBits = 2048;
constexpr int kMaxRsaBits = 8192;

constexpr std::string_view kEd25519 = "ssh-ed25519";
constexpr std::string_view kSkEd25519 = "sk-ssh-ed25519@openssh.com";
constexpr std::string_view kRsa = "ssh-rsa";
constexpr std::string_view kSkEcdsa = "sk-ecdsa-sha2-nistp256@openssh.com";
constexpr std::string_view kEcdsaPrefix = "ecdsa-sha2-";

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

Error NotAKey() {
  return Bad("not an OpenSSH public key (expected \"<type> <base64> [comment]\")");
}

Error Mismatch() { return Bad("key blob does not match its type"); }

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimLine(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The first blank-separated field of `s`; `s` keeps what follows it, leading blanks dropped.
std::string_view NextField(std::string_view& s) {
  size_t end = 0;
  while (end < s.size() && !IsBlank(s[end])) ++end;
  std::string_view field = s.substr(0, end);
  s.remove_prefix(end);
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return field;
}

// A name safe to quote back in a message: a key type's characters, not too long.
bool Quotable(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '@' || c == '.' || c == '-' || c == '_' || c == '+';
    if (!ok) return false;
  }
  return true;
}

// Reads the SSH wire encoding of a key blob (RFC 4251 §5): uint32 big-endian lengths
// before each string and mpint.
class WireReader {
 public:
  explicit WireReader(std::string_view blob) : rest_(blob) {}

  // The next string, or nullopt when the length runs past the blob.
  std::optional<std::string_view> String() {
    if (rest_.size() < 4) return std::nullopt;
    const auto* p = reinterpret_cast<const unsigned char*>(rest_.data());
    uint32_t n = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    rest_.remove_prefix(4);
    if (n > rest_.size()) return std::nullopt;
    std::string_view s = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return s;
  }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// The size in bits of a positive mpint in its minimal two's-complement form (RFC 4251 §5),
// or nullopt when it is empty (zero), negative or has a superfluous leading zero byte.
std::optional<int> PositiveMpintBits(std::string_view m) {
  if (m.empty()) return std::nullopt;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(m[i]); };
  if (byte(0) & 0x80) return std::nullopt;  // negative
  if (byte(0) == 0) {
    // A zero byte is there only to keep the next byte's top bit from reading as a sign.
    if (m.size() == 1 || !(byte(1) & 0x80)) return std::nullopt;
    m.remove_prefix(1);
  }
  int bits = static_cast<int>(m.size()) * 8;
  for (unsigned char top = byte(0); !(top & 0x80); top <<= 1) --bits;
  return bits;
}

// The key's fields after its type string, checked for `type`; sets `bits`.
Result<void> CheckFields(std::string_view type, WireReader& r, int& bits) {
  if (type == kEd25519 || type == kSkEd25519) {
    auto pk = r.String();
    if (!pk || pk->size() != 32) return Mismatch();
    bits = 256;
  } else if (type == kRsa) {
    auto e = r.String();
    auto n = r.String();
    if (!e || !n) return Mismatch();
    auto e_bits = PositiveMpintBits(*e);
    auto n_bits = PositiveMpintBits(*n);
    // The public exponent is odd and at least 3 for any working RSA key.
    if (!e_bits || *e_bits < 2 || !(static_cast<unsigned char>(e->back()) & 1) || !n_bits ||
        *e_bits > *n_bits) {
      return Mismatch();
    }
    if (*n_bits < kMinRsaBits) {
      return Bad("RSA keys must have at least 2048 bits (this one has " + std::to_string(*n_bits) +
                 ")");
    }
    if (*n_bits > kMaxRsaBits) return Bad("RSA keys may have at most 8192 bits");
    bits = *n_bits;
  } else {
    // ECDSA: the curve's name, then the point, uncompressed (SEC1 §2.3.3: 0x04 || X || Y).
    std::string_view curve = type == kSkEcdsa ? "nistp256" : type.substr(kEcdsaPrefix.size());
    auto named = r.String();
    if (!named || *named != curve) return Mismatch();
    bits = curve == "nistp256" ? 256 : curve == "nistp384" ? 384 : 521;
    const size_t coordinate = (static_cast<size_t>(bits) + 7) / 8;
    auto point = r.String();
    if (!point || point->size() != 1 + 2 * coordinate || (*point)[0] != 0x04) return Mismatch();
  }
  // Security keys name the relying party their credential was made for ("ssh:" by default).
  if (type.starts_with("sk-")) {
    auto application = r.String();
    if (!application || application->empty()) return Mismatch();
  }
  if (!r.AtEnd()) return Bad("key blob has bytes after its fields");
  return {};
}

bool Supported(std::string_view type) {
  return type == kEd25519 || type == kSkEd25519 || type == kRsa || type == kSkEcdsa ||
         type == "ecdsa-sha2-nistp256" || type == "ecdsa-sha2-nistp384" ||
         type == "ecdsa-sha2-nistp521";
}

}  // namespace

Result<SshPublicKey> ParseSshPublicKey(std::string_view line) {
  if (line.size() > kMaxLineBytes) return Bad("key is longer than 16384 bytes");
  line = TrimLine(line);
  if (line.empty()) return Bad("no key given");
  // Said before anything else is: the user must learn that the secret half left their
  // machine (and is never stored or echoed here).
  const bool pem = line.starts_with("-----BEGIN");
  if ((pem && line.find("PRIVATE KEY") != std::string_view::npos) ||
      line.starts_with("PuTTY-User-Key-File")) {
    return Bad("this is a private key; paste the .pub file");
  }
  if (pem || line.starts_with("---- BEGIN")) {
    return Bad("not an OpenSSH public key; convert it with `ssh-keygen -i -f <file>`");
  }
  if (line.find_first_of("\r\n") != std::string_view::npos) {
    return Bad("one key at a time: the key is one line");
  }
  std::string_view rest = line;
  std::string_view type = NextField(rest);
  std::string_view base64 = NextField(rest);
  if (base64.empty()) return NotAKey();
  auto blob = Base64Decode(base64);
  if (!blob) return NotAKey();
  WireReader r(*blob);
  auto blob_type = r.String();
  if (!Supported(type)) {
    // A well-formed key of a type Hangar refuses (ssh-dss, certificates) says so; anything
    // else is not a key at all.
    if (blob_type && *blob_type == type && Quotable(type)) {
      return Bad("unsupported key type '" + std::string(type) +
                 "' (use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa)");
    }
    return NotAKey();
  }
  if (!blob_type || *blob_type != type) return Mismatch();
  SshPublicKey key;
  HANGAR_TRY(CheckFields(type, r, key.bits));
  key.type = std::string(type);
  key.blob_base64 = Base64Encode(*blob);  // canonical, as sshd passes it to `hangar keys`
  key.comment = std::string(TrimLine(rest));
  const Sha256 digest = Sha256::Of(*blob);
  std::string b64 = Base64Encode(
      std::string_view(reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size()));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  key.fingerprint = "SHA256:" + b64;
  return key;
}

}  // namespace hangar::services

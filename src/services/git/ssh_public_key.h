#pragma once
// ParseSshPublicKey: one OpenSSH public key as users paste it (an authorized_keys line
// without options: "<type> <base64 blob> [comment]"), checked the way sshd would read it.

#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar::services {

struct SshPublicKey {
  std::string type;         // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", "sk-…"
  std::string blob_base64;  // the key blob as given (canonical base64, with padding)
  std::string comment;      // the rest of the line, trimmed; may be ""
  // "SHA256:" + unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it.
  std::string fingerprint;
  int bits = 0;  // RSA modulus size; the curve's size for ECDSA; 256 for Ed25519
};

// Accepts ssh-ed25519, sk-ssh-ed25519@openssh.com, ecdsa-sha2-nistp{256,384,521},
// sk-ecdsa-sha2-nistp256@openssh.com and ssh-rsa of 2048 to 8192 bits. The blob must
// decode, name the same type as the line, and hold exactly that type's fields (RFC 4251
// §5 encoding; RFC 4253 §6.6 ssh-rsa, RFC 5656 §3.1 ECDSA, RFC 8709 §4 Ed25519, OpenSSH's
// PROTOCOL.u2f sk- keys). An ECDSA point is checked for its form and length, not for lying
// on the curve: such a key could never sign, so sshd refuses it at sign-in.
// Errors: BadRequest with a message naming what is wrong ("not an OpenSSH public key",
// "unsupported key type 'ssh-dss'", "RSA keys must have at least 2048 bits", "key blob
// does not match its type", "key is longer than 16384 bytes", a private key pasted:
// "this is a private key; paste the .pub file"). Pure: no I/O, any bytes in.
Result<SshPublicKey> ParseSshPublicKey(std::string_view line);

}  // namespace hangar::services

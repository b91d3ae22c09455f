// SSH public keys as users paste them (src/services/git/ssh_public_key.h), read from the
// SSH keys API, pages and `hangar admin ssh-key`: ParseSshPublicKey over arbitrary bytes.
// An accepted key has a supported type, a canonical blob, the fingerprint of that blob,
// and prints back ("<type> <blob> <comment>") to a line that parses to the same key.

#include "core/base64.h"
#include "core/sha256.h"
#include "fuzz_check.h"
#include "services/git/ssh_public_key.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  auto key = services::ParseSshPublicKey(text);
  if (!key) {
    FUZZ_CHECK(key.error().code == ErrorCode::BadRequest && !key.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(text.size() <= 16384);
  FUZZ_CHECK(key->type == "ssh-ed25519" || key->type == "sk-ssh-ed25519@openssh.com" ||
             key->type == "ssh-rsa" || key->type == "ecdsa-sha2-nistp256" ||
             key->type == "ecdsa-sha2-nistp384" || key->type == "ecdsa-sha2-nistp521" ||
             key->type == "sk-ecdsa-sha2-nistp256@openssh.com");
  FUZZ_CHECK(key->bits >= 256 && key->bits <= 8192);
  auto blob = Base64Decode(key->blob_base64);
  FUZZ_CHECK(blob && Base64Encode(*blob) == key->blob_base64);
  const Sha256 digest = Sha256::Of(*blob);
  std::string b64 = Base64Encode(
      std::string_view(reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size()));
  FUZZ_CHECK(key->fingerprint == "SHA256:" + b64.substr(0, 43));
  FUZZ_CHECK(key->comment.find_first_of("\r\n") == std::string::npos);
  std::string line = key->type + " " + key->blob_base64;
  if (!key->comment.empty()) line += " " + key->comment;
  auto again = services::ParseSshPublicKey(line);
  FUZZ_CHECK(again && again->type == key->type && again->blob_base64 == key->blob_base64 &&
             again->fingerprint == key->fingerprint && again->comment == key->comment &&
             again->bits == key->bits);
  return 0;
}

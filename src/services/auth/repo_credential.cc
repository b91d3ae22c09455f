#include "services/auth/repo_credential.h"

#include <openssl/crypto.h>

#include <array>
#include <cstring>

#include "core/base64.h"
#include "services/auth/signing.h"

namespace hangar::services {

namespace {

// Signed payload (integers big-endian):
//   version(1) write(1) reserved(4) repo_id(8) user_id(8) deploy_key_id(8) key_id(8)
//   expires_at(8) = 46 bytes, then HMAC-SHA256(key, kContext || payload) (32 bytes): 78 bytes, a
// multiple of 3, so every base64 character carries signed bits. The context keeps these
// MACs apart from the LFS tickets' and anything else the secret signs.
constexpr uint8_t kVersion = 1;
constexpr size_t kPayloadSize = 1 + 1 + 4 + 8 * 5;
constexpr size_t kBytes = kPayloadSize + kMacSize;
static_assert(kBytes % 3 == 0);
constexpr std::string_view kContext = "hangar-repo-credential-v1\n";

Error Invalid() { return MakeError(ErrorCode::Unauthorized, "invalid or expired credential"); }

}  // namespace

std::string IssueRepoCredential(std::string_view key, const RepoCredentialClaims& claims) {
  std::array<uint8_t, kBytes> buf{};
  uint8_t* p = buf.data();
  p[0] = kVersion;
  p[1] = claims.write ? 1 : 0;
  PutU64BigEndian(p + 6, static_cast<uint64_t>(claims.repo_id));
  PutU64BigEndian(p + 14, static_cast<uint64_t>(claims.user_id));
  PutU64BigEndian(p + 22, static_cast<uint64_t>(claims.deploy_key_id));
  PutU64BigEndian(p + 30, static_cast<uint64_t>(claims.key_id));
  PutU64BigEndian(p + 38, static_cast<uint64_t>(claims.expires_at));
  std::array<uint8_t, kMacSize> mac{};
  // HMAC fails only when allocation fails; an all-zero MAC then never verifies.
  (void)SignPayload(key, kContext, std::span<const uint8_t>(p, kPayloadSize), mac);
  std::memcpy(p + kPayloadSize, mac.data(), kMacSize);
  return std::string(kRepoCredentialPrefix) +
         Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(p), buf.size()));
}

Result<RepoCredentialClaims> VerifyRepoCredential(std::string_view key, std::string_view credential,
                                                  int64_t now) {
  if (key.empty() || credential.substr(0, kRepoCredentialPrefix.size()) != kRepoCredentialPrefix) {
    return Invalid();
  }
  auto decoded = Base64UrlDecode(credential.substr(kRepoCredentialPrefix.size()));
  if (!decoded || decoded->size() != kBytes) return Invalid();
  const auto* p = reinterpret_cast<const uint8_t*>(decoded->data());
  std::array<uint8_t, kMacSize> mac{};
  if (!SignPayload(key, kContext, std::span<const uint8_t>(p, kPayloadSize), mac))
    return MakeError(ErrorCode::Internal, "HMAC failed");
  if (CRYPTO_memcmp(mac.data(), p + kPayloadSize, kMacSize) != 0) return Invalid();
  // Trusted only from here on.
  if (p[0] != kVersion || p[1] > 1 || p[2] != 0 || p[3] != 0 || p[4] != 0 || p[5] != 0) {
    return Invalid();
  }
  RepoCredentialClaims c;
  c.write = p[1] == 1;
  c.repo_id = static_cast<int64_t>(GetU64BigEndian(p + 6));
  c.user_id = static_cast<int64_t>(GetU64BigEndian(p + 14));
  c.deploy_key_id = static_cast<int64_t>(GetU64BigEndian(p + 22));
  c.key_id = static_cast<int64_t>(GetU64BigEndian(p + 30));
  c.expires_at = static_cast<int64_t>(GetU64BigEndian(p + 38));
  if (now >= c.expires_at) return Invalid();
  return c;
}

}  // namespace hangar::services

#include "services/auth/ticket.h"

#include "core/base64.h"
#include "services/auth/signing.h"

#include <openssl/crypto.h>

#include <array>
#include <cstring>

namespace hangar::services {

namespace {

// Layout of the signed payload (all integers big-endian):
//   version(1) op(1) reserved(1) repo_id(8) user_id(8) size(8) expires_at(8) oid(32)
//   = 67 bytes
// followed by HMAC-SHA256(key, kContext || payload) (32 bytes). The context string keeps
// these MACs distinct from anything else the server secret may ever sign. `reserved` is 0;
// it keeps the ticket a multiple of 3 bytes, so every base64 character carries signed bits
// (a changed character never decodes to the same ticket).
constexpr uint8_t kVersion = 2;
constexpr size_t kPayloadSize = 1 + 1 + 1 + 8 + 8 + 8 + 8 + 32;
constexpr size_t kTicketBytes = kPayloadSize + kMacSize;  // 99 → 132 base64url chars
static_assert(kTicketBytes % 3 == 0);
constexpr std::string_view kContext = "hangar-lfs-ticket-v2\n";

Error Invalid() { return MakeError(ErrorCode::Unauthorized, "invalid or expired LFS ticket"); }

}  // namespace

std::string_view TicketOpName(TicketOp op) {
  return op == TicketOp::Upload ? "upload" : "download";
}

std::string IssueTicket(std::string_view key, const TicketClaims& claims) {
  std::array<uint8_t, kTicketBytes> buf{};
  uint8_t* p = buf.data();
  p[0] = kVersion;
  p[1] = static_cast<uint8_t>(claims.op);
  p[2] = 0;
  PutU64BigEndian(p + 3, static_cast<uint64_t>(claims.repo_id));
  PutU64BigEndian(p + 11, static_cast<uint64_t>(claims.user_id));
  PutU64BigEndian(p + 19, claims.size);
  PutU64BigEndian(p + 27, static_cast<uint64_t>(claims.expires_at));
  std::memcpy(p + 35, claims.oid.bytes.data(), 32);
  std::array<uint8_t, kMacSize> mac{};
  // HMAC only fails on allocation failure; an all-zero MAC then never verifies.
  (void)SignPayload(key, kContext, std::span<const uint8_t>(p, kPayloadSize), mac);
  std::memcpy(p + kPayloadSize, mac.data(), kMacSize);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
}

Result<TicketClaims> VerifyTicket(std::string_view key, std::string_view ticket, int64_t now) {
  if (key.empty()) return Invalid();
  std::array<uint8_t, kTicketBytes> buf{};
  auto decoded = Base64UrlDecode(ticket);
  if (!decoded || decoded->size() != buf.size()) return Invalid();
  std::memcpy(buf.data(), decoded->data(), buf.size());
  std::array<uint8_t, kMacSize> mac{};
  if (!SignPayload(key, kContext, std::span<const uint8_t>(buf.data(), kPayloadSize), mac))
    return MakeError(ErrorCode::Internal, "HMAC failed");
  if (CRYPTO_memcmp(mac.data(), buf.data() + kPayloadSize, kMacSize) != 0) return Invalid();
  // Only now, with the MAC checked, is the payload trusted.
  const uint8_t* p = buf.data();
  if (p[0] != kVersion || p[2] != 0) return Invalid();
  if (p[1] != static_cast<uint8_t>(TicketOp::Upload) &&
      p[1] != static_cast<uint8_t>(TicketOp::Download)) {
    return Invalid();
  }
  TicketClaims c;
  c.op = static_cast<TicketOp>(p[1]);
  c.repo_id = static_cast<int64_t>(GetU64BigEndian(p + 3));
  c.user_id = static_cast<int64_t>(GetU64BigEndian(p + 11));
  c.size = GetU64BigEndian(p + 19);
  c.expires_at = static_cast<int64_t>(GetU64BigEndian(p + 27));
  std::memcpy(c.oid.bytes.data(), p + 35, 32);
  if (now >= c.expires_at) {
    return MakeError(ErrorCode::Unauthorized, "LFS ticket expired; request a new batch");
  }
  return c;
}

}  // namespace hangar::services

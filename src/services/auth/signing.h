#pragma once
// What the server's signed credentials share (LFS tickets, ticket.h; repo credentials,
// repo_credential.h): big-endian integers in their payloads and the HMAC-SHA256 over them.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace hangar::services {

inline constexpr size_t kMacSize = 32;  // HMAC-SHA256

// Writes / reads `v` as 8 big-endian bytes at `p`.
void PutU64BigEndian(uint8_t* p, uint64_t v);
uint64_t GetU64BigEndian(const uint8_t* p);

// HMAC-SHA256 under `key` of `context` followed by `payload` into `mac`. The context (one
// per kind of credential) keeps one kind's MACs from ever verifying as another's. False
// only when OpenSSL fails (allocation).
bool SignPayload(std::string_view key, std::string_view context, std::span<const uint8_t> payload,
                 std::array<uint8_t, kMacSize>& mac);

}  // namespace hangar::services

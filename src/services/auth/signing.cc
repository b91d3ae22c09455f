#include "services/auth/signing.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace hangar::services {

void PutU64BigEndian(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

uint64_t GetU64BigEndian(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

bool SignPayload(std::string_view key, std::string_view context, std::span<const uint8_t> payload,
                 std::array<uint8_t, kMacSize>& mac) {
  std::string message(context);
  message.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  unsigned int len = 0;
  return HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const uint8_t*>(message.data()), message.size(), mac.data(),
              &len) != nullptr &&
         len == kMacSize;
}

}  // namespace hangar::services

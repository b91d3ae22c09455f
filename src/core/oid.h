#pragma once
// Oid: a git object id (SHA-1, 20 bytes), shown as 40 lower-case hex characters.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hangar {

struct Oid {
  std::array<uint8_t, 20> bytes{};

  std::string Hex() const;
  // Exactly 40 hex characters (either case); nullopt otherwise.
  static std::optional<Oid> ParseHex(std::string_view hex);
  bool IsZero() const;

  friend bool operator==(const Oid&, const Oid&) = default;
  friend auto operator<=>(const Oid&, const Oid&) = default;
};

}  // namespace hangar

template <>
struct std::hash<hangar::Oid> {
  size_t operator()(const hangar::Oid& o) const noexcept {
    size_t h;
    __builtin_memcpy(&h, o.bytes.data(), sizeof h);
    return h;
  }
};

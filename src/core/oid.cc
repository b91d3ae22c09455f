#include "core/oid.h"

#include <algorithm>

#include "core/hex.h"

namespace hangar {

std::string Oid::Hex() const { return HexEncode(bytes); }

std::optional<Oid> Oid::ParseHex(std::string_view hex) {
  if (hex.size() != 40) return std::nullopt;
  auto raw = HexDecode(hex);
  if (!raw) return std::nullopt;
  Oid out;
  std::copy(raw->begin(), raw->end(), out.bytes.begin());
  return out;
}

bool Oid::IsZero() const {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

}  // namespace hangar

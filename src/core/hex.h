#pragma once
// Lower-case hexadecimal encoding of byte strings.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hangar {

// "0a1b..." for the given bytes, two lower-case characters per byte.
std::string HexEncode(std::span<const uint8_t> bytes);

// The bytes of an even-length hex string (either case); nullopt on any other character.
std::optional<std::vector<uint8_t>> HexDecode(std::string_view hex);

// True when `s` is exactly `len` lower-case hex characters.
bool IsLowerHex(std::string_view s, size_t len);

}  // namespace hangar

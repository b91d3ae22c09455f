#pragma once
// Base64 (RFC 4648): the standard alphabet for HTTP Basic credentials (RFC 7617), the
// URL alphabet without padding for tokens and tickets carried in URLs and headers.

#include <optional>
#include <string>
#include <string_view>

namespace hangar {

// Standard base64 with '=' padding (RFC 4648 §4). Never fails.
std::string Base64Encode(std::string_view bytes);
// Strict standard base64 (§4), padding optional; nullopt on any byte outside the alphabet
// or an impossible length.
std::optional<std::string> Base64Decode(std::string_view text);

// base64url without padding (RFC 4648 §5): only [A-Za-z0-9_-]. Never fails.
std::string Base64UrlEncode(std::string_view bytes);
// Strict unpadded base64url (§5); nullopt on any other byte or an impossible length.
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace hangar

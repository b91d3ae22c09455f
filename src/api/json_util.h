#pragma once
// Helpers shared by the JSON APIs: responses, request bodies, pagination links.

#include <boost/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/util.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::api {

// 200 (or `status`) with `v` serialized and Content-Type application/json.
http::Response JsonResponse(const boost::json::value& v, int status = 200);

// Reads the request body (at most `max_bytes`) and parses it as a JSON object; with
// `empty_is_object`, no body (or only blanks) is an empty object (calls whose clients may
// send none). The Content-Type is not checked (clients label JSON in several ways).
// Errors: PayloadTooLarge; `invalid` (BadRequest, or Unprocessable for LFS) for malformed
// JSON or a body that is not an object.
Result<boost::json::object> ReadJsonObject(http::Request& req, size_t max_bytes,
                                           ErrorCode invalid = ErrorCode::BadRequest,
                                           bool empty_is_object = false);

// The absolute URL of this request's path with its query string, `cursor` replaced by
// `cursor_value` (hf-api.md §1.11: self-contained next-page URLs).
std::string NextPageUrl(const http::Request& req, std::string_view cursor_value);

// Sets `Link: <url>; rel="next"` for the next page (hf-api.md §1.11).
void SetNextLink(http::Response& res, const http::Request& req, std::string_view cursor_value);

// A list's `?limit=`: 1..`max`, `def` when absent. Errors: BadRequest ("'limit' is 1 to
// <max>") for anything else.
Result<int> LimitQuery(const http::Request& req, int def, int max);

// A string member of `o`, "" when absent; BadRequest when present but not a string/null.
Result<std::string> StringField(const boost::json::object& o, std::string_view key);

// http::CheckDeclaredLength, used by every API family's head checks.
using http::CheckDeclaredLength;

// The bodies the registry's and the gateway's JSON calls take, at most (bytes).
constexpr size_t kMaxRegistryBody = 1 << 20;

// A string member of `o`, nullopt when absent or null; BadRequest when another type.
Result<std::optional<std::string>> OptionalString(const boost::json::object& o,
                                                  std::string_view key);

// A boolean member of `o`, false when absent or null; BadRequest when another type.
Result<bool> BoolField(const boost::json::object& o, std::string_view key);

// The avatar of user or org `name`, as the HF API gives it (`avatarUrl`): a path on this
// hub (web/pages serves /avatars/{name}.svg).
std::string AvatarUrl(std::string_view name);

// `text` as HTML: escaped; paragraphs (split at blank lines) in <p>, other line breaks as
// <br>. The public hub's `formatted` commit fields and comments' `html` are HTML the
// clients show as is.
std::string FormatHtml(std::string_view text);

// A boolean member of `o`, nullopt when absent or null; BadRequest when another type.
Result<std::optional<bool>> OptionalBool(const boost::json::object& o, std::string_view key);

// An integer member of `o` (a JSON number without fraction, within int64), nullopt when
// absent or null; BadRequest when another type.
Result<std::optional<int64_t>> OptionalInt(const boost::json::object& o, std::string_view key);

// BadRequest ("unknown field '<key>'") for the first member of `o` not in `known`: for calls
// where a misspelt or unsupported field must not be ignored.
Result<void> OnlyKeys(const boost::json::object& o, std::initializer_list<std::string_view> known);

}  // namespace hangar::api

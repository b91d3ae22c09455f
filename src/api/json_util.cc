#include "api/json_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "core/util.h"

namespace hangar::api {

namespace json = boost::json;

http::Response JsonResponse(const json::value& v, int status) {
  return http::Response::Json(status, json::serialize(v));
}

Result<json::object> ReadJsonObject(http::Request& req, size_t max_bytes, ErrorCode invalid,
                                    bool empty_is_object) {
  HANGAR_ASSIGN_OR_RETURN(auto text, req.ReadBody(max_bytes));
  if (empty_is_object && TrimBlanks(text).empty()) return json::object{};
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return MakeError(invalid, "malformed JSON body: " + ec.message());
  if (!v.is_object()) return MakeError(invalid, "the request body must be a JSON object");
  return std::move(v.as_object());
}

std::string NextPageUrl(const http::Request& req, std::string_view cursor_value) {
  std::string query;
  size_t start = 0;
  const std::string& q = req.query;
  while (start < q.size()) {
    size_t end = q.find('&', start);
    if (end == std::string::npos) end = q.size();
    std::string_view pair(q.data() + start, end - start);
    if (!pair.empty() && pair.substr(0, 7) != "cursor=" && pair != "cursor") {
      if (!query.empty()) query += '&';
      query += pair;
    }
    start = end + 1;
  }
  if (!query.empty()) query += '&';
  query += "cursor=" + PercentEncode(cursor_value);
  return req.base_url + req.path + "?" + query;
}

void SetNextLink(http::Response& res, const http::Request& req, std::string_view cursor_value) {
  res.SetHeader("Link", "<" + NextPageUrl(req, cursor_value) + ">; rel=\"next\"");
}

Result<std::string> StringField(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null()) return std::string();
  if (!it->value().is_string()) {
    return MakeError(ErrorCode::BadRequest, "field '" + std::string(key) + "' must be a string");
  }
  return std::string(it->value().as_string());
}

Result<std::optional<std::string>> OptionalString(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<std::string>();
  if (!v->is_string())
    return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be a string");
  return std::optional<std::string>(std::string(v->as_string()));
}

Result<bool> BoolField(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return false;
  if (!v->is_bool())
    return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be a boolean");
  return v->as_bool();
}

Result<std::optional<bool>> OptionalBool(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<bool>();
  if (!v->is_bool())
    return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be a boolean");
  return std::optional<bool>(v->as_bool());
}

Result<std::optional<int64_t>> OptionalInt(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return std::optional<int64_t>();
  if (!v->is_int64())
    return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be an integer");
  return std::optional<int64_t>(v->as_int64());
}

Result<void> OnlyKeys(const json::object& o, std::initializer_list<std::string_view> known) {
  for (const auto& kv : o) {
    if (std::find(known.begin(), known.end(), std::string_view(kv.key())) == known.end()) {
      return MakeError(ErrorCode::BadRequest,
                       "unknown field '" + ValidUtf8(std::string(kv.key()).substr(0, 40)) + "'");
    }
  }
  return {};
}

Result<int> LimitQuery(const http::Request& req, int def, int max) {
  auto l = req.Query("limit");
  if (!l) return def;
  auto n = ParseRowId(*l);
  if (!n || *n > max) {
    return MakeError(ErrorCode::BadRequest, "'limit' is 1 to " + std::to_string(max));
  }
  return static_cast<int>(*n);
}

std::string AvatarUrl(std::string_view name) { return "/avatars/" + PercentEncode(name) + ".svg"; }

std::string FormatHtml(std::string_view text) {
  std::string out;
  size_t pos = 0;
  bool open = false;
  bool blank_before = false;
  while (pos < text.size()) {
    std::string_view line = TrimBlanks(NextLine(text, pos));
    if (line.empty()) {
      blank_before = true;
      continue;
    }
    if (!open || blank_before) {
      if (open) out += "</p>";
      out += "<p>";
      open = true;
    } else {
      out += "<br>";
    }
    blank_before = false;
    AppendEscapedMarkup(out, line);
  }
  if (open) out += "</p>";
  return out;
}

}  // namespace hangar::api

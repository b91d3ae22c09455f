#include "http/request.h"

#include <charconv>

#include "core/util.h"

namespace hangar::http {

Method ParseMethod(std::string_view name) {
  if (name == "GET") return Method::Get;
  if (name == "HEAD") return Method::Head;
  if (name == "POST") return Method::Post;
  if (name == "PUT") return Method::Put;
  if (name == "PATCH") return Method::Patch;
  if (name == "DELETE") return Method::Delete;
  if (name == "OPTIONS") return Method::Options;
  return Method::Other;
}

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::Get:
      return "GET";
    case Method::Head:
      return "HEAD";
    case Method::Post:
      return "POST";
    case Method::Put:
      return "PUT";
    case Method::Patch:
      return "PATCH";
    case Method::Delete:
      return "DELETE";
    case Method::Options:
      return "OPTIONS";
    case Method::Other:
      break;
  }
  return "OTHER";
}

std::string_view Request::Header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return v;
  }
  return {};
}

bool Request::HasHeader(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return true;
  }
  return false;
}

std::string_view Request::Param(std::string_view name) const {
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return {};
}

// Calls fn(decoded_key, raw_value) for each key=value pair of the query string.
template <typename Fn>
static void ForEachQueryPair(std::string_view query, Fn fn) {
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(start, end - start);
    size_t eq = pair.find('=');
    std::string_view k = pair.substr(0, eq);
    std::string_view v = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (!k.empty()) fn(k, v);
    start = end + 1;
  }
}

static std::string DecodeQueryPart(std::string_view s) {
  std::string plus_as_space(s);
  for (auto& c : plus_as_space) {
    if (c == '+') c = ' ';
  }
  return PercentDecode(plus_as_space);
}

static bool KeyMatches(std::string_view raw_key, std::string_view key) {
  std::string k = DecodeQueryPart(raw_key);
  if (k == key) return true;
  return k.size() == key.size() + 2 && k.compare(0, key.size(), key) == 0 &&
         k.compare(key.size(), 2, "[]") == 0;
}

std::optional<std::string> Request::Query(std::string_view key) const {
  std::optional<std::string> out;
  ForEachQueryPair(query, [&](std::string_view k, std::string_view v) {
    if (!out && KeyMatches(k, key)) out = DecodeQueryPart(v);
  });
  return out;
}

std::vector<std::string> Request::QueryAll(std::string_view key) const {
  std::vector<std::string> out;
  ForEachQueryPair(query, [&](std::string_view k, std::string_view v) {
    if (KeyMatches(k, key)) out.push_back(DecodeQueryPart(v));
  });
  return out;
}

std::optional<uint64_t> Request::ContentLength() const {
  std::string_view v = Header("content-length");
  if (v.empty()) return std::nullopt;
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return n;
}

std::optional<uint64_t> Request::DeclaredBodyLength() const {
  if (auto n = ContentLength()) return n;
  if (HasHeader("content-length") || HasHeader("transfer-encoding")) return std::nullopt;
  return uint64_t{0};
}

Result<void> Request::ChargeBodyMemory(uint64_t n) {
  if (!body_memory || n == 0) return {};
  if (!body_memory_held)
    body_memory_held = std::make_unique<MemoryLease>(*body_memory, body_memory_wait);
  return body_memory_held->Grow(n);
}

Result<std::string> Request::ReadBody(size_t max_bytes) {
  auto too_large = [max_bytes] {
    return MakeError(ErrorCode::PayloadTooLarge,
                     "request body is larger than " + std::to_string(max_bytes) + " bytes");
  };
  auto len = ContentLength();
  if (len && *len > max_bytes) return too_large();
  // With a length, all of it at once: bodies that each hold a part of the budget and wait
  // for more could wait on one another until they all time out.
  if (len) HANGAR_TRY(ChargeBodyMemory(*len));
  std::string out;
  char buf[16384];
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, body->Read(buf));
    if (n == 0) return out;
    if (out.size() + n > max_bytes) return too_large();
    if (!len) HANGAR_TRY(ChargeBodyMemory(n));
    out.append(buf, n);
  }
}

std::optional<bool> ParseBool(std::string_view v) {
  // Compared as views: strcasecmp stopped at a decoded NUL, so "true%00x" read as true.
  std::string s = AsciiLower(v);
  if (s == "1" || s == "true") return true;
  if (s == "0" || s == "false") return false;
  return std::nullopt;
}

Result<void> CheckDeclaredLength(const Request& req, size_t max_bytes) {
  if (auto n = req.ContentLength(); n && *n > max_bytes)
    return MakeError(ErrorCode::PayloadTooLarge,
                     "the body is over " + std::to_string(max_bytes) + " bytes");
  return {};
}

}  // namespace hangar::http

#include "http/preconditions.h"

#include "core/util.h"

namespace hangar::http {

namespace {

// Whether the entity-tag list `list` (§8.8.3: `*`, or tags with an optional W/ prefix,
// separated by commas) holds `etag`; `weak` compares ignoring W/ (§8.8.3.2), else a weak
// tag never matches.
bool ListHolds(std::string_view list, std::string_view etag, bool weak) {
  list = TrimBlanks(list);
  if (list == "*") return true;
  while (!list.empty()) {
    list = TrimBlanks(list);
    if (list.starts_with(',')) {
      list.remove_prefix(1);
      continue;
    }
    bool is_weak = list.starts_with("W/");
    if (is_weak) list.remove_prefix(2);
    if (!list.starts_with('"')) return false;  // not a list of entity tags
    size_t close = list.find('"', 1);
    if (close == std::string_view::npos) return false;
    std::string_view tag = list.substr(0, close + 1);
    if ((weak || !is_weak) && tag == etag) return true;
    list.remove_prefix(close + 1);
  }
  return false;
}

}  // namespace

std::optional<int> EvaluatePreconditions(const Request& req, std::string_view etag) {
  if (req.HasHeader("if-match") && !ListHolds(req.Header("if-match"), etag, false)) return 412;
  if (req.HasHeader("if-none-match") && ListHolds(req.Header("if-none-match"), etag, true)) {
    return req.method == Method::Get || req.method == Method::Head ? 304 : 412;
  }
  return std::nullopt;
}

bool RangeApplies(const Request& req, std::string_view etag) {
  if (!req.HasHeader("if-range")) return true;
  std::string_view v = TrimBlanks(req.Header("if-range"));
  return v.starts_with('"') && v == etag;
}

}  // namespace hangar::http

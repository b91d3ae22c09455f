#include "core/trace.h"

#include "core/util.h"

namespace hangar {
namespace {

bool LowerHex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

}  // namespace

std::optional<TraceContext> TraceContext::FromHeader(std::string_view v) {
  // version "-" trace-id "-" parent-id "-" trace-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  constexpr size_t kLength = 55;
  if (v.size() < kLength || v[2] != '-' || v[35] != '-' || v[52] != '-') return std::nullopt;
  std::string_view version = v.substr(0, 2), trace = v.substr(3, 32), parent = v.substr(36, 16),
                   flags = v.substr(53, 2);
  if (!LowerHex(version, 2) || version == "ff") return std::nullopt;
  if (!LowerHex(trace, 32) || AllZero(trace)) return std::nullopt;
  if (!LowerHex(parent, 16) || AllZero(parent)) return std::nullopt;
  if (!LowerHex(flags, 2)) return std::nullopt;
  if (v.size() > kLength && (version == "00" || v[kLength] != '-')) return std::nullopt;
  TraceContext t;
  t.trace_id = std::string(trace);
  t.parent_id = std::string(parent);
  t.span_id = RandomHex(8);
  int low = flags[1] >= 'a' ? flags[1] - 'a' + 10 : flags[1] - '0';
  t.sampled = (low & 1) != 0;
  return t;
}

TraceContext TraceContext::New() {
  TraceContext t;
  t.trace_id = RandomHex(16);
  t.span_id = RandomHex(8);
  return t;
}

TraceContext TraceContext::Child() const {
  TraceContext t;
  t.trace_id = trace_id;
  t.parent_id = span_id;
  t.span_id = RandomHex(8);
  t.sampled = sampled;
  return t;
}

std::string TraceContext::Header() const {
  return "00-" + trace_id + "-" + span_id + (sampled ? "-01" : "-00");
}

}  // namespace hangar

// W3C traceparent headers (src/core/trace.h), read from every request: what FromHeader
// accepts must give well-formed ids, and the header its context sends must be read back
// as the same trace.

#include "core/trace.h"
#include "fuzz_check.h"

using namespace hangar;

namespace {

bool LowerHex(const std::string& s, size_t n) {
  return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos &&
         s.find_first_not_of('0') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  auto t = TraceContext::FromHeader(text);
  if (!t) return 0;
  FUZZ_CHECK(LowerHex(t->trace_id, 32));
  FUZZ_CHECK(LowerHex(t->parent_id, 16));
  FUZZ_CHECK(LowerHex(t->span_id, 16));
  FUZZ_CHECK(text.substr(3, 32) == t->trace_id && text.substr(36, 16) == t->parent_id);
  auto again = TraceContext::FromHeader(t->Header());
  FUZZ_CHECK(again && again->trace_id == t->trace_id && again->parent_id == t->span_id);
  FUZZ_CHECK(again->sampled == t->sampled);
  return 0;
}

#pragma once
// TraceContext: W3C Trace Context (https://www.w3.org/TR/trace-context/, §3.2
// "traceparent"): which trace a request belongs to and which span is its parent, so that
// the hub's logs, its spans (OTLP export) and the calls it makes (the gateway's backends)
// join the trace a client started. Issue 17 §4.

#include <optional>
#include <string>
#include <string_view>

namespace hangar {

struct TraceContext {
  std::string trace_id;   // 32 lower-case hex, not all zero
  std::string span_id;    // 16 lower-case hex, not all zero: this span's
  std::string parent_id;  // 16 lower-case hex of the caller's span; "" for a trace's root
  bool sampled = true;    // the caller's sampled flag (trace-flags bit 0)

  // The context a `traceparent` header value carries (its span as parent_id, a new
  // span_id for ours), or nullopt when the value is malformed: not
  // "<2 hex version>-<32 hex>-<16 hex>-<2 hex flags>" in lower case, version ff, an
  // all-zero id, or (version 00) anything after the flags. A later version's extra
  // fields after a '-' are allowed, as §3.2.4 asks.
  static std::optional<TraceContext> FromHeader(std::string_view traceparent);
  // A new trace: random trace and span ids, no parent.
  static TraceContext New();
  // A child of this span: same trace, this span as parent, a new span id.
  TraceContext Child() const;
  // "00-<trace_id>-<span_id>-<01|00>": what a call made within this span sends.
  std::string Header() const;
};

}  // namespace hangar

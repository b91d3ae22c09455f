#pragma once
// UpstreamBody: a backend's answer passed through to the client as it arrives (an event
// stream, or a non-stream answer too large to hold), with the bookkeeping done when it
// ends: the route's latency and error counters, the backend's health, and the tokens its
// `usage` reports charged to the caller's limit. An event stream the backend breaks off
// ends with an error event, `data: {"error": {...}}`, which OpenAI's clients raise as an
// error; any other body ends with a read error (the connection is cut).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "core/byte_source.h"
#include "net/http_client.h"
#include "services/gateway/route_metrics.h"

namespace hangar::services {

// The `usage.total_tokens` (or OIP-less: none) found in the tail of an answer, or 0.
int64_t TotalTokensIn(std::string_view tail);

class UpstreamBody final : public ByteSource {
 public:
  // Called once when the body ends: whether the backend delivered all of it, and the
  // tokens its usage reported.
  using OnEnd = std::function<void(bool ok, int64_t tokens)>;

  using Clock = std::chrono::steady_clock;
  // `prefix`: bytes already read from `up`, sent first. `event_stream`: end a failure with
  // an error event rather than a read error. Past `deadline` the body fails (a never-ending
  // answer); an event stream passes Clock::time_point::max().
  UpstreamBody(std::unique_ptr<net::HttpStream> up, std::string prefix, bool event_stream,
               RouteCounters& counters, Clock::time_point start, Clock::time_point deadline,
               OnEnd on_end, std::shared_ptr<void> hold = nullptr);
  ~UpstreamBody() override;

  Result<size_t> Read(std::span<char> buf) override;
  std::optional<uint64_t> Size() const override;

 private:
  size_t FromPending(std::span<char> buf);
  void Keep(std::span<const char> bytes);  // the tail where usage is looked for
  void End(bool ok);

  std::unique_ptr<net::HttpStream> up_;
  std::string pending_;  // bytes to send before reading `up_` again
  size_t pending_pos_ = 0;
  bool event_stream_;
  RouteCounters& counters_;
  Clock::time_point start_, deadline_;
  OnEnd on_end_;
  std::string tail_;
  int64_t events_ = 0;  // events passed (an event stream's)
  char last_ = 0;       // the last byte passed
  bool ended_ = false;
  bool finished_ = false;       // nothing more to send
  std::shared_ptr<void> hold_;  // what must live as long as the body (a runtime's lease)
};

}  // namespace hangar::services

#include "services/gateway/upstream_body.h"

#include <algorithm>
#include <cstring>

#include <boost/json.hpp>

#include "core/log.h"

namespace hangar::services {
namespace {

constexpr size_t kTail = 4096;  // bytes of an answer's end kept to find its usage

}  // namespace

int64_t TotalTokensIn(std::string_view tail) {
  // OpenAI's usage object ends the answer (or, streamed, its last chunk); the last
  // occurrence is the whole request's. Only digits are taken: the value is untrusted.
  size_t at = tail.rfind("\"total_tokens\"");
  if (at == std::string_view::npos) return 0;
  std::string_view rest = tail.substr(at + 14);
  size_t i = 0;
  while (i < rest.size() && (rest[i] == ' ' || rest[i] == ':' || rest[i] == '\t')) ++i;
  int64_t n = 0;
  for (int digits = 0; i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && digits < 12;
       ++i, ++digits) {
    n = n * 10 + (rest[i] - '0');
  }
  return n;
}

UpstreamBody::UpstreamBody(std::unique_ptr<net::HttpStream> up, std::string prefix,
                           bool event_stream, RouteCounters& counters, Clock::time_point start,
                           Clock::time_point deadline, OnEnd on_end, std::shared_ptr<void> hold)
    : up_(std::move(up)),
      pending_(std::move(prefix)),
      event_stream_(event_stream),
      counters_(counters),
      start_(start),
      deadline_(deadline),
      on_end_(std::move(on_end)),
      hold_(std::move(hold)) {
  Keep(pending_);
}

UpstreamBody::~UpstreamBody() {
  // The client went away first (or the server stopped): the backend was not at fault.
  if (!ended_) {
    ended_ = true;
    counters_.latency.Add(std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - start_)
                              .count());
  }
}

void UpstreamBody::Keep(std::span<const char> bytes) {
  if (bytes.size() >= kTail) {
    tail_.assign(bytes.end() - kTail, bytes.end());
    return;
  }
  tail_.append(bytes.begin(), bytes.end());
  if (tail_.size() > 2 * kTail) tail_.erase(0, tail_.size() - kTail);
}

void UpstreamBody::End(bool ok) {
  if (ended_) return;
  ended_ = true;
  counters_.latency.Add(std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - start_)
                            .count());
  if (!ok) counters_.errors.fetch_add(1, std::memory_order_relaxed);
  int64_t tokens = ok ? TotalTokensIn(tail_) : 0;
  // A stream without a usage chunk (no stream_options.include_usage) is charged one
  // token per event but the closing [DONE]: an estimate, so that it is charged at all.
  if (ok && tokens == 0 && event_stream_) tokens = std::max<int64_t>(0, events_ - 1);
  if (on_end_) on_end_(ok, tokens);
}

size_t UpstreamBody::FromPending(std::span<char> buf) {
  size_t n = std::min(buf.size(), pending_.size() - pending_pos_);
  std::memcpy(buf.data(), pending_.data() + pending_pos_, n);
  pending_pos_ += n;
  if (pending_pos_ == pending_.size()) {
    pending_.clear();
    pending_pos_ = 0;
  }
  return n;
}

Result<size_t> UpstreamBody::Read(std::span<char> buf) {
  if (pending_pos_ < pending_.size()) return FromPending(buf);
  if (finished_) return size_t{0};
  Result<size_t> n = MakeError(ErrorCode::GatewayTimeout, "the answer did not end in time");
  if (Clock::now() < deadline_) n = up_->Read(buf);
  if (n && *n > 0) {
    Keep(buf.first(*n));
    if (event_stream_) {
      for (char c : buf.first(*n)) {
        if (c == '\n' && last_ == '\n') ++events_;  // an event ends with a blank line
        last_ = c;
      }
    }
    return n;
  }
  finished_ = true;
  End(n.has_value());
  if (n) return size_t{0};
  Log("gateway")->warn("backend broke off its answer: {}", n.error().message);
  up_.reset();  // closes the connection: the backend stops working on it
  if (!event_stream_) return std::move(n).error();
  // The event stream ends cleanly, its last event saying why.
  namespace json = boost::json;
  pending_ = "data: " +
             json::serialize(json::object{
                 {"error",
                  // (Why, naming the backend's URL, goes to the hub's log only.)
                  json::object{{"message", n.error().code == ErrorCode::GatewayTimeout
                                               ? "the backend stalled: the stream was cut"
                                               : "the backend broke off the stream"},
                               {"type", "api_error"},
                               {"param", nullptr},
                               {"code", "BadGateway"}}}}) +
             "\n\n";
  return FromPending(buf);
}

std::optional<uint64_t> UpstreamBody::Size() const {
  if (event_stream_ || !up_) return std::nullopt;
  auto rest = up_->Size();
  if (!rest) return std::nullopt;
  return *rest + (pending_.size() - pending_pos_);
}

}  // namespace hangar::services

#pragma once
// TokenLimits: a route's per-token limits on requests and on model tokens per minute
// (issue 16, docs/gateway.md §Limits). Each (token, route) pair has two buckets that refill
// continuously at their per-minute rate up to one minute's worth: a request takes one from
// the first, and the tokens its answer reports (`usage.total_tokens`) are taken from the
// second afterwards, which may go below zero; while either is short, requests are refused
// with the seconds until they would pass.

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace hangar::services {

// Thread-safe; one per process. Times are unix milliseconds from `now_ms`.
class TokenLimits {
 public:
  static constexpr size_t kMaxKeys = 100000;  // pairs kept; full buckets are dropped first

  explicit TokenLimits(std::function<int64_t()> now_ms);

  // Takes one request for `key` under `requests_per_minute` and `tokens_per_minute` (0: no
  // limit). nullopt: admitted; else the whole seconds (≥ 1) to wait.
  std::optional<int64_t> Admit(const std::string& key, int64_t requests_per_minute,
                               int64_t tokens_per_minute);
  // Charges `tokens` an answer used to `key`'s token bucket.
  void Charge(const std::string& key, int64_t tokens_per_minute, int64_t tokens);

 private:
  struct Buckets {
    double requests = 0, tokens = 0;  // what is left; start full (set on first use)
    int64_t at_ms = 0;                // when they were last refilled
    int64_t rpm = 0, tpm = 0;         // the rates of the last Admit
  };
  // `key`'s buckets at `now` under the rates given (a new pair starts full). mu_ held.
  Buckets& Refilled(const std::string& key, int64_t rpm, int64_t tpm, int64_t now);

  std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::unordered_map<std::string, Buckets> buckets_;
};

}  // namespace hangar::services

#pragma once
// RouteMetrics: what the gateway counts per route (issue 16, docs/gateway.md §Metrics):
// requests, errors, retries, refusals by the limits, and two latency histograms — the
// whole request as the gateway saw it, and the upstream's time to its response head.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace hangar::services {

// Latencies in microseconds, in buckets growing by 2^(1/4) (quantiles within 19 %).
// Lock-free; thread-safe.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 96;  // 1 µs … about 2^24 s
  void Add(int64_t micros);
  int64_t Count() const;
  // The upper bound of the bucket holding quantile q (0 < q ≤ 1), µs; 0 when empty.
  int64_t Quantile(double q) const;
  void Reset();

 private:
  std::array<std::atomic<int64_t>, kBuckets> buckets_{};
};

struct RouteCounters {
  std::atomic<int64_t> route_id{0};  // the route they count (a name may be reused)
  std::atomic<int64_t> requests{0};  // answered (any status), including refused ones
  std::atomic<int64_t> errors{0};    // answered 5xx, or a stream cut by its backend
  std::atomic<int64_t> retries{0};   // attempts after the first
  std::atomic<int64_t> limited{0};   // refused by the per-token limits (429)
  std::atomic<int64_t> tokens{0};    // usage.total_tokens the backends reported
  LatencyHistogram latency;          // the whole request, as the gateway saw it
  LatencyHistogram upstream;         // the backend's time to its response head
};

// The counters of every route by name, made on first use. Thread-safe.
class GatewayMetrics {
 public:
  static constexpr size_t kMaxRoutes = 10000;  // a deleted route's counters stay until then
  // The counters of route `route` (id `route_id`): zeroed when the name last counted
  // another route (one deleted and made anew). Stays valid for the process's life.
  RouteCounters& For(const std::string& route, int64_t route_id);

 private:
  std::shared_mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<RouteCounters>> routes_;
  RouteCounters overflow_;  // shared by names past kMaxRoutes
};

}  // namespace hangar::services

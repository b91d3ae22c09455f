#include "services/gateway/route_metrics.h"

#include <cmath>
#include <mutex>

namespace hangar::services {
namespace {

int BucketOf(int64_t micros) {
  if (micros <= 1) return 0;
  int b = static_cast<int>(std::ceil(4.0 * std::log2(double(micros))));
  return std::min(b, LatencyHistogram::kBuckets - 1);
}

}  // namespace

void LatencyHistogram::Add(int64_t micros) {
  buckets_[BucketOf(micros)].fetch_add(1, std::memory_order_relaxed);
}

int64_t LatencyHistogram::Count() const {
  int64_t n = 0;
  for (const auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  return n;
}

int64_t LatencyHistogram::Quantile(double q) const {
  std::array<int64_t, kBuckets> counts;
  int64_t total = 0;
  for (int i = 0; i < kBuckets; ++i)
    total += counts[i] = buckets_[i].load(std::memory_order_relaxed);
  if (total == 0) return 0;
  auto rank = static_cast<int64_t>(std::ceil(q * double(total)));
  for (int i = 0; i < kBuckets; ++i) {
    rank -= counts[i];
    if (rank <= 0) return static_cast<int64_t>(std::ceil(std::exp2(i / 4.0)));
  }
  return static_cast<int64_t>(std::exp2((kBuckets - 1) / 4.0));
}

void LatencyHistogram::Reset() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
}

RouteCounters& GatewayMetrics::For(const std::string& route, int64_t route_id) {
  {
    std::shared_lock lock(mu_);
    if (auto it = routes_.find(route);
        it != routes_.end() && it->second->route_id.load() == route_id)
      return *it->second;
  }
  std::unique_lock lock(mu_);
  auto& slot = routes_[route];
  if (!slot) {
    if (routes_.size() > kMaxRoutes) {
      routes_.erase(route);
      return overflow_;
    }
    slot = std::make_unique<RouteCounters>();
    slot->route_id = route_id;
  }
  if (slot->route_id.load() != route_id) {
    RouteCounters& c = *slot;
    for (auto* n : {&c.requests, &c.errors, &c.retries, &c.limited, &c.tokens}) n->store(0);
    c.latency.Reset();
    c.upstream.Reset();
    c.route_id = route_id;
  }
  return *slot;
}

}  // namespace hangar::services

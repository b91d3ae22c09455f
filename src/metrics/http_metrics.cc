#include "metrics/http_metrics.h"

#include <algorithm>

namespace hangar::metrics {
namespace {

constexpr std::array<const char*, HttpMetrics::kMethods> kMethodNames = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"};
constexpr std::array<const char*, 5> kCodes = {"1xx", "2xx", "3xx", "4xx", "5xx"};

}  // namespace

HttpMetrics::HttpMetrics(Registry& registry, std::vector<std::string> routes)
    : routes_(std::move(routes)),
      requests_(prometheus::BuildCounter()
                    .Name("hangar_http_requests_total")
                    .Help("HTTP requests answered, by route pattern, method and status class")
                    .Register(registry.prom())),
      latency_(prometheus::BuildHistogram()
                   .Name("hangar_http_request_duration_seconds")
                   .Help("From a request's head read to its answer's last byte sent, seconds")
                   .Register(registry.prom())),
      in_flight_(Gauge(registry, "hangar_http_requests_in_flight",
                       "Requests whose head was read and whose answer is not yet sent")),
      slots_((routes_.size() + 1) * kMethods) {}

HttpMetrics::Series& HttpMetrics::SeriesOf(int route, int method) {
  size_t row = route >= 0 && static_cast<size_t>(route) < routes_.size()
                   ? static_cast<size_t>(route)
                   : routes_.size();
  size_t col = static_cast<size_t>(std::clamp(method, 0, kMethods - 1));
  auto& slot = slots_[row * kMethods + col];
  if (Series* s = slot.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(mu_);
  if (Series* s = slot.load(std::memory_order_relaxed)) return *s;
  const std::string& pattern = row < routes_.size() ? routes_[row] : "unmatched";
  auto s = std::make_unique<Series>();
  for (size_t c = 0; c < kCodes.size(); ++c) {
    s->codes[c] =
        &requests_.Add({{"route", pattern}, {"method", kMethodNames[col]}, {"code", kCodes[c]}});
  }
  s->latency = &latency_.Add({{"route", pattern}, {"method", kMethodNames[col]}}, LatencyBuckets());
  slot.store(s.get(), std::memory_order_release);
  made_.push_back(std::move(s));
  return *made_.back();
}

void HttpMetrics::Answered(int route, int method, int status, double seconds) {
  in_flight_.Decrement();
  Series& s = SeriesOf(route, method);
  s.codes[static_cast<size_t>(std::clamp(status / 100, 1, 5) - 1)]->Increment();
  s.latency->Observe(seconds);
}

}  // namespace hangar::metrics

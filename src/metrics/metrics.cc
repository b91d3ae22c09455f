#include "metrics/metrics.h"

#include <prometheus/text_serializer.h>

namespace hangar::metrics {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
      0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
  return kBuckets;
}

Registry::Registry() : registry_(std::make_shared<prometheus::Registry>()) {}

void Registry::OnScrape(std::function<void()> hook) {
  std::lock_guard lock(scrape_mu_);
  hooks_.push_back(std::move(hook));
}

std::string Registry::Render() {
  std::lock_guard lock(scrape_mu_);
  for (const auto& hook : hooks_) hook();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

prometheus::Counter& Counter(Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r.prom()).Add({});
}

prometheus::Gauge& Gauge(Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r.prom()).Add({});
}

}  // namespace hangar::metrics

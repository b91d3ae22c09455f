#pragma once
// Metrics: the process's Prometheus registry (prometheus-cpp's core library) and its text
// exposition for GET /metrics (issue 17 §4; the format is Prometheus' text format 0.0.4).
// Counters and histograms are updated where things happen (lock-free or one short lock
// each); gauges of pools and queues are read when a scrape comes (OnScrape).
//
// Every metric is named hangar_<what>_<unit>, with seconds and bytes as units.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace hangar::metrics {

// Latency buckets, seconds: 0.25 ms … 60 s, about three per decade.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();

// Thread-safe. One per process (the App owns it); outlives what it counts.
class Registry {
 public:
  Registry();

  prometheus::Registry& prom() { return *registry_; }
  // Runs `hook` before every Render, to set gauges read from elsewhere (pool use, queue
  // lengths). Hooks run under the registry's scrape lock, one scrape at a time.
  void OnScrape(std::function<void()> hook);
  // Every metric, in Prometheus' text format.
  std::string Render();

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::mutex scrape_mu_;
  std::vector<std::function<void()>> hooks_;  // guarded by scrape_mu_
};

// A family's one series, for code that keeps the reference (the family lives as long as
// the registry): Counter(registry, "hangar_x_total", "help").
prometheus::Counter& Counter(Registry& r, const std::string& name, const std::string& help);
prometheus::Gauge& Gauge(Registry& r, const std::string& name, const std::string& help);

}  // namespace hangar::metrics

#pragma once
// HttpMetrics: what the HTTP server counts (issue 17 §4): requests by route, method and
// status class, their latency by route and method, and the requests in flight.
//   hangar_http_requests_total{route="/api/models/{ns}/{name}",method="GET",code="2xx"}
//   hangar_http_request_duration_seconds{route=…,method=…}   (histogram; head read → answer sent)
//   hangar_http_requests_in_flight
// Routes are labelled by their pattern, never by the path asked for, so the number of
// series is bounded by the route table (a path that matched no route is "unmatched").

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace hangar::metrics {

class HttpMetrics {
 public:
  // The methods told apart (http::Method's order: GET, HEAD, POST, PUT, PATCH, DELETE,
  // OPTIONS, other).
  static constexpr int kMethods = 8;

  // `routes`: the route table's patterns, in its order (a request's route index).
  HttpMetrics(Registry& registry, std::vector<std::string> routes);

  // A request's head was read.
  void Started() { in_flight_.Increment(); }
  // It was answered: `route` its index in the table (-1: none matched), `method` its
  // http::Method as an int, `status` the answer's, `seconds` since its head arrived.
  // Thread-safe; lock-free once the (route, method) pair has been seen.
  void Answered(int route, int method, int status, double seconds);

 private:
  struct Series {
    std::array<prometheus::Counter*, 5> codes{};  // 1xx … 5xx
    prometheus::Histogram* latency = nullptr;
  };
  Series& SeriesOf(int route, int method);

  std::vector<std::string> routes_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Gauge& in_flight_;
  std::mutex mu_;  // creates series
  // routes_.size() + 1 rows (the last: unmatched) of kMethods; made on first use.
  std::vector<std::atomic<Series*>> slots_;
  std::vector<std::unique_ptr<Series>> made_;  // guarded by mu_
};

}  // namespace hangar::metrics

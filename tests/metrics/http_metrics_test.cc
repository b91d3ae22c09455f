// What HttpMetrics counts and how /metrics shows it (metrics/http_metrics.h): series by
// route pattern, method and status class; latency histograms; requests in flight.
#include "metrics/http_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace hangar::metrics {
namespace {

constexpr int kGet = 0, kHead = 1, kPost = 2;

// The value of the series whose text line starts with `prefix` (labels included), or -1.
double ValueOf(const std::string& text, const std::string& prefix) {
  size_t at = text.find("\n" + prefix + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + prefix.size() + 2));
}

TEST(HttpMetrics, CountsByRouteMethodAndStatusClass) {
  Registry registry;
  HttpMetrics m(registry, {"/api/models/{ns}/{name}", "/{ns}/{name}/resolve/{rest*}"});
  for (int i = 0; i < 3; ++i) {
    m.Started();
    m.Answered(1, kHead, 200, 0.0004);
  }
  m.Started();
  m.Answered(1, kGet, 404, 0.002);
  m.Started();
  m.Answered(0, kPost, 503, 0.2);
  m.Started();
  m.Answered(-1, kGet, 404, 0.0001);  // no route matched

  std::string text = registry.Render();
  const std::string resolve = R"(route="/{ns}/{name}/resolve/{rest*}")";
  EXPECT_EQ(
      ValueOf(text, R"(hangar_http_requests_total{code="2xx",method="HEAD",)" + resolve + "}"), 3)
      << text;
  EXPECT_EQ(ValueOf(text, R"(hangar_http_requests_total{code="4xx",method="GET",)" + resolve + "}"),
            1);
  EXPECT_EQ(
      ValueOf(
          text,
          R"(hangar_http_requests_total{code="5xx",method="POST",route="/api/models/{ns}/{name}"})"),
      1);
  EXPECT_EQ(
      ValueOf(text, R"(hangar_http_requests_total{code="4xx",method="GET",route="unmatched"})"), 1);
  // The three HEADs fall in the 0.5 ms bucket and every bucket above it.
  EXPECT_EQ(ValueOf(text, R"(hangar_http_request_duration_seconds_bucket{method="HEAD",)" +
                              resolve + R"(,le="0.00025"})"),
            0);
  EXPECT_EQ(ValueOf(text, R"(hangar_http_request_duration_seconds_bucket{method="HEAD",)" +
                              resolve + R"(,le="0.0005"})"),
            3);
  EXPECT_EQ(
      ValueOf(text, R"(hangar_http_request_duration_seconds_count{method="HEAD",)" + resolve + "}"),
      3);
  EXPECT_EQ(ValueOf(text, "hangar_http_requests_in_flight"), 0);
}

TEST(HttpMetrics, InFlightCountsRequestsNotYetAnswered) {
  Registry registry;
  HttpMetrics m(registry, {"/a"});
  m.Started();
  m.Started();
  EXPECT_EQ(ValueOf(registry.Render(), "hangar_http_requests_in_flight"), 2);
  m.Answered(0, kGet, 200, 0.001);
  EXPECT_EQ(ValueOf(registry.Render(), "hangar_http_requests_in_flight"), 1);
}

TEST(HttpMetrics, OutOfRangeRoutesAndMethodsAreUnmatchedAndOther) {
  Registry registry;
  HttpMetrics m(registry, {"/a"});
  m.Started();
  m.Answered(7, 99, 999, 1);
  std::string text = registry.Render();
  EXPECT_EQ(
      ValueOf(text, R"(hangar_http_requests_total{code="5xx",method="OTHER",route="unmatched"})"),
      1)
      << text;
}

TEST(HttpMetrics, ConcurrentAnswersAreAllCounted) {
  Registry registry;
  HttpMetrics m(registry, {"/a", "/b"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < 10000; ++i) {
        m.Started();
        m.Answered(t % 2, kGet, 200, 0.001);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::string text = registry.Render();
  EXPECT_EQ(ValueOf(text, R"(hangar_http_requests_total{code="2xx",method="GET",route="/a"})"),
            20000);
  EXPECT_EQ(ValueOf(text, R"(hangar_http_requests_total{code="2xx",method="GET",route="/b"})"),
            20000);
  EXPECT_EQ(ValueOf(text, "hangar_http_requests_in_flight"), 0);
}

TEST(Registry, ScrapeHooksRunBeforeEachRender) {
  Registry registry;
  auto& g = Gauge(registry, "hangar_test_gauge", "a gauge set at scrape time");
  int scrapes = 0;
  registry.OnScrape([&] { g.Set(++scrapes); });
  EXPECT_EQ(ValueOf(registry.Render(), "hangar_test_gauge"), 1);
  std::string text = registry.Render();
  EXPECT_EQ(ValueOf(text, "hangar_test_gauge"), 2);
  EXPECT_NE(text.find("# TYPE hangar_test_gauge gauge"), std::string::npos);
}

}  // namespace
}  // namespace hangar::metrics

#include "services/gateway/route_metrics.h"

#include <gtest/gtest.h>

#include "services/gateway/upstream_body.h"

namespace hangar::services {
namespace {

TEST(LatencyHistogram, QuantilesWithinABucket) {
  LatencyHistogram h;
  EXPECT_EQ(h.Quantile(0.5), 0);
  for (int i = 1; i <= 1000; ++i) h.Add(i * 10);  // 10 µs … 10 ms, evenly
  EXPECT_EQ(h.Count(), 1000);
  // Buckets grow by 2^(1/4): the bound is at most 19 % above the true quantile.
  EXPECT_GE(h.Quantile(0.5), 5000);
  EXPECT_LE(h.Quantile(0.5), 5000 * 1.19 + 1);
  EXPECT_GE(h.Quantile(0.99), 9900);
  EXPECT_LE(h.Quantile(0.99), 9900 * 1.19 + 1);
}

TEST(GatewayMetrics, OneCounterSetPerRoute) {
  GatewayMetrics m;
  m.For("a", 1).requests += 2;
  m.For("b", 2).requests += 1;
  EXPECT_EQ(m.For("a", 1).requests.load(), 2);
  EXPECT_EQ(&m.For("a", 1), &m.For("a", 1));
  // Route "a" deleted and made anew (another id): it counts from zero.
  EXPECT_EQ(m.For("a", 3).requests.load(), 0);
  EXPECT_EQ(m.For("b", 2).requests.load(), 1);
}

TEST(TotalTokensIn, TakesTheLastUsageAndOnlyDigits) {
  EXPECT_EQ(TotalTokensIn(R"({"usage": {"prompt_tokens": 3, "total_tokens": 11}})"), 11);
  EXPECT_EQ(TotalTokensIn("data: {\"usage\":{\"total_tokens\":5}}\n\ndata: "
                          "{\"usage\":{\"total_tokens\":42}}\n\ndata: [DONE]\n\n"),
            42);
  EXPECT_EQ(TotalTokensIn(R"({"total_tokens": "lots"})"), 0);
  EXPECT_EQ(TotalTokensIn("no usage"), 0);
  EXPECT_EQ(TotalTokensIn(R"({"total_tokens": 99999999999999999999})"), 999999999999);
}

}  // namespace
}  // namespace hangar::services

#include "services/gateway/balancer.h"

#include <gtest/gtest.h>

#include <map>

namespace hangar::services {
namespace {

struct BalancerTest : ::testing::Test {
  int64_t now = 1'000'000;
  Balancer balancer{[this] { return now; }};
  std::vector<db::BackendRecord> backends{{"url", "http://a", 90}, {"url", "http://b", 10}};

  std::string First() { return balancer.Order(backends).front()->target; }
};

TEST_F(BalancerTest, DrawsInProportionToTheWeights) {
  std::map<std::string, int> seen;
  for (int i = 0; i < 20000; ++i) ++seen[First()];
  // 10 % of 20,000 = 2,000; the standard deviation of the count is about 42.
  EXPECT_NEAR(seen["http://b"], 2000, 300);
  EXPECT_EQ(seen["http://a"] + seen["http://b"], 20000);
}

TEST_F(BalancerTest, TheOthersFollowTheDrawHeaviestFirst) {
  backends.push_back({"url", "http://standby", 0});
  for (int i = 0; i < 200; ++i) {
    auto order = balancer.Order(backends);
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(order.back()->target, "http://standby");  // weight 0: only as a last resort
  }
}

TEST_F(BalancerTest, EjectsAfterThreeFailuresInARowForTheCooldown) {
  balancer.Failed("http://a");
  balancer.Failed("http://a");
  EXPECT_FALSE(balancer.Health(backends)[0].ejected);
  balancer.Succeeded("http://a");  // the run is broken: counting starts again
  balancer.Failed("http://a");
  balancer.Failed("http://a");
  EXPECT_FALSE(balancer.Health(backends)[0].ejected);
  balancer.Failed("http://a");
  ASSERT_TRUE(balancer.Health(backends)[0].ejected);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(First(), "http://b");
  // Ejected ones are still tried last, so a route whose backends all fail still tries.
  EXPECT_EQ(balancer.Order(backends).back()->target, "http://a");
  now += Balancer::kCooldownMs;
  EXPECT_FALSE(balancer.Health(backends)[0].ejected);
}

TEST_F(BalancerTest, AFailureRightAfterTheCooldownEjectsAgainForLonger) {
  for (int i = 0; i < 3; ++i) balancer.Failed("http://a");
  now += Balancer::kCooldownMs;
  balancer.Failed("http://a");  // one failure is enough now
  auto h = balancer.Health(backends)[0];
  ASSERT_TRUE(h.ejected);
  EXPECT_EQ(h.ejected_until_ms, now + 2 * Balancer::kCooldownMs);
  EXPECT_EQ(h.ejections, 2);
}

TEST_F(BalancerTest, AHealthCheckThatPassesBringsItBackAtOnce) {
  for (int i = 0; i < 3; ++i) balancer.Failed("http://a");
  ASSERT_TRUE(balancer.Health(backends)[0].ejected);
  balancer.Recovered("http://a");
  auto h = balancer.Health(backends)[0];
  EXPECT_FALSE(h.ejected);
  EXPECT_EQ(h.failures_in_row, 0);
}

}  // namespace
}  // namespace hangar::services

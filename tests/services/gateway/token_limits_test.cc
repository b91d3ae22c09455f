#include "services/gateway/token_limits.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

struct TokenLimitsTest : ::testing::Test {
  int64_t now = 5'000'000;
  TokenLimits limits{[this] { return now; }};
};

TEST_F(TokenLimitsTest, NoLimitAdmitsEverything) {
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(limits.Admit("t1/r", 0, 0));
}

TEST_F(TokenLimitsTest, RequestsPerMinuteRefillContinuously) {
  EXPECT_FALSE(limits.Admit("t1/r", 2, 0));
  EXPECT_FALSE(limits.Admit("t1/r", 2, 0));
  auto wait = limits.Admit("t1/r", 2, 0);
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 30);  // one request comes back every 30 s at 2 per minute
  EXPECT_FALSE(limits.Admit("t2/r", 2, 0)) << "another token has its own budget";
  now += 29'000;
  EXPECT_EQ(limits.Admit("t1/r", 2, 0), 1);
  now += 1'000;
  EXPECT_FALSE(limits.Admit("t1/r", 2, 0));
}

TEST_F(TokenLimitsTest, TokensAreChargedAfterTheAnswerAndMayGoBelowZero) {
  EXPECT_FALSE(limits.Admit("t1/r", 0, 100));
  limits.Charge("t1/r", 100, 160);  // an answer used more than the whole minute's budget
  auto wait = limits.Admit("t1/r", 0, 100);
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 37);  // 61 tokens to come back at 100 per minute: 36.6 s
  now += 37'000;
  EXPECT_FALSE(limits.Admit("t1/r", 0, 100));
}

}  // namespace
}  // namespace hangar::services

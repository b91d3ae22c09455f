// api::registry::ParseMlflowFilter (mlflow_filter.h): MLflow's search filter grammar.

#include "api/registry/mlflow_filter.h"

#include <gtest/gtest.h>

namespace hangar::api::registry {
namespace {

TEST(MlflowFilter, ParsesConditionsJoinedByAnd) {
  auto c = ParseMlflowFilter("name LIKE '%fraud%' and tags.team = \"risk\"  AND run_id != 'x'");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->size(), 3u);
  EXPECT_EQ((*c)[0].field, "name");
  EXPECT_EQ((*c)[0].op, "LIKE");
  EXPECT_EQ((*c)[0].value, "%fraud%");
  EXPECT_EQ((*c)[1].field, "tags");
  EXPECT_EQ((*c)[1].tag, "team");
  EXPECT_EQ((*c)[1].value, "risk");
  EXPECT_EQ((*c)[2].op, "!=");
}

TEST(MlflowFilter, QuotedTagKeysAndDoubledQuotes) {
  auto c = ParseMlflowFilter("tags.`my key` = 'it''s' AND name ilike \"a\"\"b\"");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ((*c)[0].tag, "my key");
  EXPECT_EQ((*c)[0].value, "it's");
  EXPECT_EQ((*c)[1].op, "ILIKE");
  EXPECT_EQ((*c)[1].value, "a\"b");
}

TEST(MlflowFilter, EmptyIsNoCondition) {
  EXPECT_TRUE(ParseMlflowFilter("").value().empty());
  EXPECT_TRUE(ParseMlflowFilter("   ").value().empty());
}

TEST(MlflowFilter, RefusesWhatIsNotTheGrammar) {
  for (const char* bad : {"name", "name =", "name = fraud", "name = 'x' OR name = 'y'",
                          "name = 'x' AND", "tags = 'x'", "tags.`` = 'x'", "name > 'x'",
                          "name = 'x'; DROP TABLE users", "run_id = 'unterminated", "= 'x'"}) {
    auto c = ParseMlflowFilter(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_EQ(c.error().code, ErrorCode::BadRequest) << bad;
  }
  std::string many;
  for (int i = 0; i < 21; ++i) many += (i ? " AND " : "") + std::string("name = 'x'");
  EXPECT_FALSE(ParseMlflowFilter(many).has_value());
  EXPECT_FALSE(ParseMlflowFilter("name = '" + std::string(1000, 'a') + "'").has_value());
}

}  // namespace
}  // namespace hangar::api::registry

// services/repo/model_card.h: the YAML front matter of a README as JSON (hf-api.md §3.3).

#include "services/repo/model_card.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

TEST(ModelCard, SplitsFrontMatterFromTheBody) {
  CardParts p = SplitFrontMatter("---\nlicense: mit\n---\n# Title\n");
  EXPECT_TRUE(p.has_yaml);
  EXPECT_EQ(p.yaml, "license: mit\n");
  EXPECT_EQ(p.body, "# Title\n");
  CardParts none = SplitFrontMatter("---\nlicense: mit\n");  // never closed
  EXPECT_FALSE(none.has_yaml);
  EXPECT_EQ(none.body, "---\nlicense: mit\n");
}

TEST(ModelCard, ParsesAMappingAndRefusesOtherYaml) {
  auto card = ParseCardData("---\nlicense: mit\nlikes: 3\ntags: [a, b]\n---\n").value();
  ASSERT_TRUE(card.has_value());
  EXPECT_EQ(card->at("license").as_string(), "mit");
  EXPECT_EQ(card->at("likes").as_int64(), 3);
  EXPECT_EQ(card->at("tags").as_array().size(), 2u);
  EXPECT_FALSE(ParseCardData("# no front matter\n").value().has_value());
  EXPECT_EQ(ParseCardData("---\n- a\n---\n").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(ParseCardData("---\na: [b\n---\n").error().code, ErrorCode::BadRequest);
}

// Aliases repeat the node they name: 8 anchors of 10 aliases each stood for 123 million
// values (tests/fuzz/corpus/model_card/alias_expansion, 309 bytes), which took seconds
// of CPU and gigabytes to turn into JSON. Now refused past 100,000 values.
TEST(ModelCard, RefusesAliasExpansion) {
  std::string yaml = "---\na: &a [x,x,x,x,x,x,x,x,x,x]\n";
  std::string prev = "a";
  for (char c = 'b'; c <= 'h'; ++c) {
    yaml += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) yaml += (i ? ",*" : "*") + prev;
    yaml += "]\n";
    prev = std::string(1, c);
  }
  auto r = ParseCardData(yaml + "---\n# card\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_NE(r.error().message.find("more than 100000 values"), std::string::npos)
      << r.error().message;
  // A few aliases are fine.
  auto ok = ParseCardData("---\nbase: &b {x: 1}\nother: *b\n---\n").value();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->at("other").as_object().at("x").as_int64(), 1);
}

}  // namespace
}  // namespace hangar::services

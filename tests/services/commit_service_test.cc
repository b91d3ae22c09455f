#include "services/content/commit_service.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

TEST(MatchesLfsAttribute, FollowsTheGlobsOfFilterLfsLines) {
  const std::string attrs =
      "# comment *.txt filter=lfs\n"
      "*.bin filter=lfs diff=lfs merge=lfs -text\r\n"
      "weights.pt filter=lfs\n"
      "data/** filter=lfs\n"
      "/root.dat filter=lfs\n"
      "docs/*.pdf filter=lfs\n"
      "keep.bin -filter\n"
      "*.md text\n";
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "a.bin"));
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "deep/dir/a.bin"));
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "sub/weights.pt"));
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "data/x/y.csv"));
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "root.dat"));
  EXPECT_TRUE(MatchesLfsAttribute(attrs, "docs/a.pdf"));
  EXPECT_FALSE(MatchesLfsAttribute(attrs, "docs/x/a.pdf"));
  EXPECT_FALSE(MatchesLfsAttribute(attrs, "keep.bin"));
  EXPECT_FALSE(MatchesLfsAttribute(attrs, "a.txt"));
  EXPECT_FALSE(MatchesLfsAttribute(attrs, "README.md"));
  EXPECT_FALSE(MatchesLfsAttribute(attrs, "database/x"));
  EXPECT_FALSE(MatchesLfsAttribute("", "a.bin"));
}

}  // namespace
}  // namespace hangar::services

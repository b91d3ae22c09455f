#include "api/hf/hf_common.h"

#include <gtest/gtest.h>

namespace hangar::api {
namespace {

TEST(SplitRevisionAndPath, EncodedAndRawSpecialRefs) {
  auto a = SplitRevisionAndPath("refs%2Fpr%2F1/dir/a%20b.txt");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->revision, "refs/pr/1");
  EXPECT_EQ(a->path, "dir/a b.txt");
  auto b = SplitRevisionAndPath("refs/pr/12/x.bin");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->revision, "refs/pr/12");
  EXPECT_EQ(b->path, "x.bin");
  auto c = SplitRevisionAndPath("feat%2Fx/sub%2Fdir");  // Python's tree path encoding
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->revision, "feat/x");
  EXPECT_EQ(c->path, "sub/dir");
}

TEST(SplitRevisionAndPath, DecodesExactlyOnce) {
  auto a = SplitRevisionAndPath("refs%252Fpr%252F2/x");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->revision, "refs%2Fpr%2F2");
}

TEST(SplitRevisionAndPath, RejectsTraversalAndHostileBytes) {
  for (const char* bad : {"main/../x", "main/%2e%2e/x", "main/a%00b", "main/%2Fetc%2Fpasswd",
                          "main/.git/config", "main/a%5C..%5C..%5C/../x"}) {
    auto r = SplitRevisionAndPath(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << bad;
  }
}

TEST(SplitRevisionAndPath, AcceptsNamesGitHoldsWithBackslashesAndNewlines) {
  // git trees may hold them (pushed with git); a read looks the name up in the tree, never
  // on a filesystem (ValidateReadPath).
  auto a = SplitRevisionAndPath("main/a%5Cb");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->path, "a\\b");
  auto b = SplitRevisionAndPath("main/line%0Abreak.txt");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->path, "line\nbreak.txt");
}

TEST(SplitRevisionAndPath, RootAndTrailingSlash) {
  auto a = SplitRevisionAndPath("main");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->path, "");
  auto b = SplitRevisionAndPath("main/dir/");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->path, "dir");
}

}  // namespace
}  // namespace hangar::api

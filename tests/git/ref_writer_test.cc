#include "git/ref_writer.h"

#include <gtest/gtest.h>

#include "git/commit_builder.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Sh;
using testing::TempDir;

const Signature kAlice{"alice", "alice@users.noreply.hangar", 1700000000, 0};

TEST(RefWriter, ShortNamesFollowCheckRefFormat) {
  for (const char* ok : {"dev", "feat/x", "v1.0", "a-b_c", "release/2024/01"}) {
    EXPECT_TRUE(IsValidShortRefName(ok)) << ok;
  }
  for (const char* bad : {"", "a..b", "-x", "x.lock", " ", "a b", "x/", ".hidden", "a~1", "a^",
                          "a:b", "a?", "a*", "a[", "a\\b", "HEAD", "a@{b"}) {
    EXPECT_FALSE(IsValidShortRefName(bad)) << bad;
  }
}

TEST(RefWriter, CreatesDeletesAndRefusesDuplicates) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  auto head = InitBareRepo(repo, {{"a.txt", "a\n"}}, kAlice, "init");
  ASSERT_TRUE(head.has_value());
  ASSERT_TRUE(CreateRef(repo, "refs/heads/dev", *head, false).has_value());
  EXPECT_EQ(CreateRef(repo, "refs/heads/dev", *head, false).error().code, ErrorCode::Conflict);
  EXPECT_TRUE(CreateRef(repo, "refs/heads/dev", *head, true).has_value());
  Oid missing = *Oid::ParseHex("0123456789012345678901234567890123456789");
  EXPECT_EQ(CreateRef(repo, "refs/heads/x", missing, false).error().code,
            ErrorCode::RevisionNotFound);
  auto tag = CreateAnnotatedTag(repo, "v1", *head, kAlice, "first");
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(Sh(tmp.path(), "git --git-dir=r.git cat-file -t v1"), "tag\n");
  EXPECT_EQ(CreateAnnotatedTag(repo, "v1", *head, kAlice, "again").error().code,
            ErrorCode::Conflict);
  EXPECT_TRUE(DeleteRef(repo, "refs/heads/dev").has_value());
  EXPECT_EQ(DeleteRef(repo, "refs/heads/dev").error().code, ErrorCode::RevisionNotFound);
  EXPECT_TRUE(DeleteRef(repo, "refs/tags/v1").has_value());
}

TEST(RefWriter, PullRequestNumbersFollowTheHighest) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  auto head = InitBareRepo(repo, {{"a.txt", "a\n"}}, kAlice, "init");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(CreatePullRequestRef(repo, *head).value(), 1);
  EXPECT_EQ(CreatePullRequestRef(repo, *head).value(), 2);
  ASSERT_TRUE(CreateRef(repo, "refs/pr/9", *head, false).has_value());
  EXPECT_EQ(CreatePullRequestRef(repo, *head).value(), 10);
}

}  // namespace
}  // namespace hangar::git

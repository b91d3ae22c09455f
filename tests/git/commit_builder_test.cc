#include "git/commit_builder.h"

#include <gtest/gtest.h>

#include "git/pointer.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Sh;
using testing::TempDir;
using Kind = TreeChange::Kind;

const Signature kAlice{"alice", "alice@users.noreply.hangar", 1700000000, 0};

// A bare repo whose main holds a, dir/b, dir/sub/c and old/x.
std::string MakeRepo(const TempDir& tmp, Oid* head) {
  std::string repo = tmp.path() + "/r.git";
  auto c = InitBareRepo(
      repo,
      {{"a.txt", "a\n"}, {"dir/b.txt", "b\n"}, {"dir/sub/c.txt", "c\n"}, {"old/x.txt", "x\n"}},
      kAlice, "init");
  EXPECT_TRUE(c.has_value());
  if (c) *head = *c;
  return repo;
}

CommitRequest Request(std::vector<TreeChange> changes) {
  CommitRequest r;
  r.branch = "main";
  r.changes = std::move(changes);
  r.author = kAlice;
  r.message = "Update files\n\nMore words.\n";
  return r;
}

TEST(CommitChanges, AppliesEveryKindOfChangeOnNestedTrees) {
  TempDir tmp;
  Oid init;
  std::string repo = MakeRepo(tmp, &init);
  std::string pointer = FormatPointer(Pointer{Sha256::Of("big"), 3});
  auto c = CommitChanges(repo, Request({{Kind::Upsert, "a.txt", "A\n"},
                                        {Kind::Upsert, "new/deep/n.txt", "n\n"},
                                        {Kind::Upsert, "model.bin", pointer},
                                        {Kind::DeleteFile, "dir/sub/c.txt", ""},
                                        {Kind::DeleteFolder, "old", ""}}));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(Sh(repo, "git rev-parse main"), c->Hex() + "\n");
  EXPECT_EQ(Sh(repo, "git ls-tree -r --name-only main"),
            "a.txt\ndir/b.txt\nmodel.bin\nnew/deep/n.txt\n");
  EXPECT_EQ(Sh(repo, "git show main:a.txt"), "A\n");
  EXPECT_EQ(Sh(repo, "git show main:model.bin"), pointer);
  EXPECT_EQ(Sh(repo, "git log -1 --format='%an|%ae|%cn|%ce|%P|%s|%b' main"),
            "alice|alice@users.noreply.hangar|alice|alice@users.noreply.hangar|" + init.Hex() +
                "|Update files|More words.\n\n");
  EXPECT_EQ(Sh(repo, "git fsck --strict --no-dangling 2>&1"), "");
}

TEST(CommitChanges, DeletingTheLastFileOfAFolderRemovesTheFolder) {
  TempDir tmp;
  Oid init;
  std::string repo = MakeRepo(tmp, &init);
  auto c = CommitChanges(repo, Request({{Kind::DeleteFile, "dir/sub/c.txt", ""}}));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(Sh(repo, "git ls-tree -r -t --name-only main"),
            "a.txt\ndir\ndir/b.txt\nold\nold/x.txt\n");
}

TEST(CommitChanges, RefusesBadChangesAndLeavesTheBranch) {
  TempDir tmp;
  Oid init;
  std::string repo = MakeRepo(tmp, &init);
  struct Case {
    std::vector<TreeChange> changes;
    ErrorCode code;
  } cases[] = {
      {{{Kind::DeleteFile, "missing.txt", ""}}, ErrorCode::EntryNotFound},
      {{{Kind::DeleteFile, "dir", ""}}, ErrorCode::EntryNotFound},
      {{{Kind::DeleteFolder, "a.txt", ""}}, ErrorCode::EntryNotFound},
      {{{Kind::DeleteFolder, "nope/deeper", ""}}, ErrorCode::EntryNotFound},
      {{{Kind::Upsert, "dir", "x"}}, ErrorCode::BadRequest},
      {{{Kind::Upsert, "a.txt/y", "x"}}, ErrorCode::BadRequest},
      {{{Kind::Upsert, "p", "x"}, {Kind::Upsert, "p/q", "y"}}, ErrorCode::BadRequest},
      {{{Kind::Upsert, "p/q", "y"}, {Kind::Upsert, "p", "x"}}, ErrorCode::BadRequest},
  };
  for (const auto& tc : cases) {
    auto c = CommitChanges(repo, Request(tc.changes));
    ASSERT_FALSE(c.has_value()) << tc.changes[0].path;
    EXPECT_EQ(c.error().code, tc.code) << tc.changes[0].path << ": " << c.error().message;
  }
  auto req = Request({{Kind::Upsert, "z", "z"}});
  req.branch = "nope";
  EXPECT_EQ(CommitChanges(repo, req).error().code, ErrorCode::RevisionNotFound);
  req.branch = "..bad";
  EXPECT_EQ(CommitChanges(repo, req).error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(Sh(repo, "git rev-parse main"), init.Hex() + "\n");
}

TEST(CommitChanges, ChecksTheExpectedParent) {
  TempDir tmp;
  Oid init;
  std::string repo = MakeRepo(tmp, &init);
  auto req = Request({{Kind::Upsert, "z", "z"}});
  req.expected_parent = init;
  auto first = CommitChanges(repo, req);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto stale = CommitChanges(repo, req);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().code, ErrorCode::PreconditionFailed);
  EXPECT_EQ(Sh(repo, "git rev-parse main"), first->Hex() + "\n");
  // Without a parent, commits go on top of whatever the head is.
  auto again = CommitChanges(repo, Request({{Kind::Upsert, "z", "zz"}}));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(Sh(repo, "git rev-parse main^"), first->Hex() + "\n");
}

}  // namespace
}  // namespace hangar::git

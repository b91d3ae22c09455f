// git/merge (issue 19 §2): what merging a pull request's head into its base does — up to
// date, fast-forward, a three-way merge commit, a conflict — MergeInto's guard on the ref,
// CommitsSince's order and bounds, and CompareCommits' "base...head" diff, against real
// repositories made with the git binary.

#include "git/merge.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "git/history.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Quote;
using testing::Sh;
using testing::TempDir;

// c1 (root, tag `fork`) holds shared.txt "s1 s2 s3". From it:
//   feature: f1 adds feat.txt, f2 changes shared.txt's line 3;
//   clash:   x1 changes shared.txt's line 1 (as main does, differently) and adds clash.txt;
//   main:    m1 adds main.txt, m2 changes shared.txt's line 1;
//   ahead:   main + a1 (adds ahead.txt).
constexpr std::string_view kMergeScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
printf 's1\ns2\ns3\n' > shared.txt
git add -A && commit 1700000001 -m 'c1 root'
git tag fork
git checkout -q -b feature
printf 'f\n' > feat.txt && git add -A && commit 1700000002 -m 'f1 add feat'
printf 's1\ns2\nS3-feature\n' > shared.txt && git add -A && commit 1700000003 -m 'f2 change line three' -m 'body text'
git checkout -q -b clash fork
printf 'S1-clash\ns2\ns3\n' > shared.txt && printf 'c\n' > clash.txt
git add -A && commit 1700000004 -m 'x1 clash'
git checkout -q main
printf 'm\n' > main.txt && git add -A && commit 1700000005 -m 'm1 add main'
printf 'S1-main\ns2\ns3\n' > shared.txt && git add -A && commit 1700000006 -m 'm2 change line one'
git checkout -q -b ahead
printf 'a\n' > ahead.txt && git add -A && commit 1700000007 -m 'a1 ahead'
git checkout -q main
cd .. && git clone -q --bare work repo.git
)SH";

// Each test gets its own repository: merges move its refs.
class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Sh(dir_.path(), std::string(kMergeScript));
    repo_ = dir_.path() + "/repo.git";
  }
  // The commit `rev` names in the repository now.
  Oid Rev(const std::string& rev) {
    std::string hex = Sh(repo_, "git rev-parse " + Quote(rev + "^{commit}"));
    return Oid::ParseHex(hex.substr(0, 40)).value_or(Oid{});
  }
  std::string Git(const std::string& args) { return Sh(repo_, "git " + args); }
  static std::vector<std::string> Subjects(const std::vector<LogEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.subject);
    return out;
  }
  static const FileDiff* Find(const CommitDetail& d, std::string_view path) {
    for (const auto& f : d.files)
      if (f.path == path) return &f;
    return nullptr;
  }
  static Oid Missing() { return Oid::ParseHex("0123456789abcdef0123456789abcdef01234567").value(); }

  const Signature merger_{"Mia Merger", "mia@example.com", 1700000100, 0};
  TempDir dir_;
  std::string repo_;
};

TEST_F(MergeTest, HeadInBaseHistoryIsUpToDateAndLeavesTheRefAlone) {
  const Oid main = Rev("main"), fork = Rev("fork");
  auto check = CheckMerge(repo_, main, fork);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_TRUE(check->up_to_date);
  EXPECT_FALSE(check->fast_forward);
  EXPECT_TRUE(check->conflicts.empty());
  auto same = CheckMerge(repo_, main, main);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_TRUE(same->up_to_date);

  auto merged = MergeInto(repo_, "refs/heads/main", main, fork, merger_, "merge\n");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(*merged, main);
  EXPECT_EQ(Rev("main"), main);
}

TEST_F(MergeTest, BaseInHeadHistoryFastForwards) {
  const Oid main = Rev("main"), ahead = Rev("ahead");
  auto check = CheckMerge(repo_, main, ahead);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_FALSE(check->up_to_date);
  EXPECT_TRUE(check->fast_forward);
  EXPECT_TRUE(check->conflicts.empty());

  auto merged = MergeInto(repo_, "refs/heads/main", main, ahead, merger_, "merge\n");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(*merged, ahead) << "a fast-forward writes no commit";
  EXPECT_EQ(Rev("main"), ahead);
}

TEST_F(MergeTest, DivergedCleanMergeWritesACommitOfBothSides) {
  const Oid main = Rev("main"), feature = Rev("feature");
  auto check = CheckMerge(repo_, main, feature);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_FALSE(check->up_to_date);
  EXPECT_FALSE(check->fast_forward);
  EXPECT_TRUE(check->conflicts.empty());

  auto merged = MergeInto(repo_, "refs/heads/main", main, feature, merger_, "Merge feature\n");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_NE(*merged, main);
  EXPECT_NE(*merged, feature);
  EXPECT_EQ(Rev("main"), *merged);
  EXPECT_EQ(Git("log -1 --format='%P' main"), main.Hex() + " " + feature.Hex() + "\n");
  EXPECT_EQ(Git("log -1 --format='%an <%ae> %at|%cn|%B' main"),
            "Mia Merger <mia@example.com> 1700000100|Mia Merger|Merge feature\n\n");
  EXPECT_EQ(Git("ls-tree -r --name-only main"), "feat.txt\nmain.txt\nshared.txt\n");
  // Line 1 from main, line 3 from feature: a real three-way merge of the file.
  EXPECT_EQ(Git("show main:shared.txt"), "S1-main\ns2\nS3-feature\n");
  EXPECT_EQ(Rev("feature"), feature) << "the head's branch does not move";
}

TEST_F(MergeTest, ConflictIsListedAndRefusedWithoutTouchingTheRef) {
  const Oid main = Rev("main"), clash = Rev("clash");
  auto check = CheckMerge(repo_, main, clash);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_FALSE(check->up_to_date);
  EXPECT_FALSE(check->fast_forward);
  EXPECT_EQ(check->conflicts, std::vector<std::string>{"shared.txt"})
      << "clash.txt merges cleanly and is not listed";

  const std::string objects_before = Git("count-objects");
  auto merged = MergeInto(repo_, "refs/heads/main", main, clash, merger_, "merge\n");
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().code, ErrorCode::Conflict);
  EXPECT_NE(merged.error().message.find("shared.txt"), std::string::npos) << merged.error().message;
  EXPECT_EQ(merged.error().message.find("clash.txt"), std::string::npos) << merged.error().message;
  EXPECT_EQ(Rev("main"), main);
  EXPECT_EQ(Git("count-objects"), objects_before) << "no commit written";
}

TEST_F(MergeTest, RefThatMovedAwayFromBaseIsAConflict) {
  const Oid main = Rev("main"), m1 = Rev("main~1"), fork = Rev("fork"), feature = Rev("feature");
  // A merge commit would be written from m1, but main is at m2 now.
  auto merged = MergeInto(repo_, "refs/heads/main", m1, feature, merger_, "merge\n");
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().code, ErrorCode::Conflict) << merged.error().message;
  EXPECT_EQ(Rev("main"), main);
  // A fast-forward from where main was (fork → feature) is refused too.
  auto ff = MergeInto(repo_, "refs/heads/main", fork, feature, merger_, "merge\n");
  ASSERT_FALSE(ff);
  EXPECT_EQ(ff.error().code, ErrorCode::Conflict) << ff.error().message;
  EXPECT_EQ(Rev("main"), main);
}

TEST_F(MergeTest, MissingCommitIsRevisionNotFound) {
  const Oid main = Rev("main");
  auto check = CheckMerge(repo_, main, Missing());
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().code, ErrorCode::RevisionNotFound) << check.error().message;
  auto merged = MergeInto(repo_, "refs/heads/main", main, Missing(), merger_, "merge\n");
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().code, ErrorCode::RevisionNotFound) << merged.error().message;
  EXPECT_EQ(Rev("main"), main);
  auto log = CommitsSince(repo_, {main}, Missing(), 10);
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().code, ErrorCode::RevisionNotFound) << log.error().message;
}

TEST_F(MergeTest, CommitsSinceListsHeadsCommitsOldestFirst) {
  const Oid fork = Rev("fork"), f1 = Rev("feature~1"), f2 = Rev("feature");
  auto since_fork = CommitsSince(repo_, {fork}, f2, 100);
  ASSERT_TRUE(since_fork) << since_fork.error().message;
  EXPECT_EQ(Subjects(*since_fork),
            (std::vector<std::string>{"f1 add feat", "f2 change line three"}));
  ASSERT_EQ(since_fork->size(), 2u);
  EXPECT_EQ((*since_fork)[0].id, f1);
  EXPECT_EQ((*since_fork)[1].id, f2);
  EXPECT_EQ((*since_fork)[1].parents, std::vector<Oid>{f1});
  EXPECT_EQ((*since_fork)[1].author.name, "Alice Author");
  EXPECT_EQ((*since_fork)[1].author.email, "alice@example.com");
  EXPECT_EQ((*since_fork)[1].author.time, 1700000003);
  EXPECT_EQ((*since_fork)[1].committer.name, "Bob Committer");

  // Since main: what feature has that main lacks (the fork and main's own are hidden).
  auto since_main = CommitsSince(repo_, {Rev("main")}, f2, 100);
  ASSERT_TRUE(since_main) << since_main.error().message;
  EXPECT_EQ(since_main->size(), 2u);

  auto all = CommitsSince(repo_, {}, f2, 100);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(Subjects(*all),
            (std::vector<std::string>{"c1 root", "f1 add feat", "f2 change line three"}));
  EXPECT_TRUE(all->front().parents.empty());

  auto none = CommitsSince(repo_, {f2}, f2, 100);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST_F(MergeTest, CommitsSinceLimitKeepsTheNewest) {
  const Oid f2 = Rev("feature");
  auto two = CommitsSince(repo_, {}, f2, 2);
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ(Subjects(*two), (std::vector<std::string>{"f1 add feat", "f2 change line three"}));
  auto one = CommitsSince(repo_, {}, f2, 1);
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one->front().id, f2);
}

TEST_F(MergeTest, CommitsSinceAnUnknownCommitHidesNothing) {
  auto all = CommitsSince(repo_, {Missing()}, Rev("feature"), 100);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(Subjects(*all),
            (std::vector<std::string>{"c1 root", "f1 add feat", "f2 change line three"}));
}

TEST_F(MergeTest, CompareCommitsShowsOnlyHeadsSideSinceTheMergeBase) {
  const Oid main = Rev("main"), feature = Rev("feature");
  auto diff = CompareCommits(repo_, main, feature, DiffLimits{});
  ASSERT_TRUE(diff) << diff.error().message;
  EXPECT_EQ(diff->commit.id, feature);
  EXPECT_EQ(diff->commit.subject, "f2 change line three");
  EXPECT_EQ(diff->total_files, 2u);
  EXPECT_FALSE(diff->truncated);
  ASSERT_EQ(diff->files.size(), 2u);
  EXPECT_EQ(Find(*diff, "main.txt"), nullptr) << "main's own change since the fork";

  const FileDiff* feat = Find(*diff, "feat.txt");
  ASSERT_NE(feat, nullptr);
  EXPECT_EQ(feat->change, FileDiff::Change::Added);
  EXPECT_EQ(feat->additions, 1u);
  EXPECT_EQ(feat->deletions, 0u);
  EXPECT_NE(feat->patch.find("+f"), std::string::npos) << feat->patch;

  const FileDiff* shared = Find(*diff, "shared.txt");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->change, FileDiff::Change::Modified);
  EXPECT_EQ(shared->additions, 1u);
  EXPECT_EQ(shared->deletions, 1u);
  EXPECT_TRUE(shared->patch.starts_with("@@")) << shared->patch;
  EXPECT_NE(shared->patch.find("-s3\n+S3-feature"), std::string::npos) << shared->patch;
  // Against the merge base, not main: main's line 1 is not in it.
  EXPECT_EQ(shared->patch.find("S1-main"), std::string::npos) << shared->patch;
  EXPECT_NE(shared->patch.find(" s1\n"), std::string::npos) << shared->patch;
}

TEST_F(MergeTest, CompareCommitsOfAMissingHeadIsRevisionNotFound) {
  auto diff = CompareCommits(repo_, Rev("main"), Missing(), DiffLimits{});
  ASSERT_FALSE(diff);
  EXPECT_EQ(diff.error().code, ErrorCode::RevisionNotFound) << diff.error().message;
}

}  // namespace
}  // namespace hangar::git

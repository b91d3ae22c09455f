// git/history_rewrite and git/lfs_scan (issue 19 §4): SquashInto's one parentless commit and
// its guard on the ref, RewriteWithout's history without some blobs on every kind of ref,
// and LfsAppearances' first appearance of each LFS object, against real repositories made
// with the git binary.

#include "git/history_rewrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/sha256.h"
#include "git/lfs_scan.h"
#include "git/pointer.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Quote;
using testing::Sh;
using testing::TempDir;

constexpr std::string_view kEmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

// What every test needs of its repository.
class RepoTest : public ::testing::Test {
 protected:
  void Build(const std::string& script) {
    Sh(dir_.path(), script);
    repo_ = dir_.path() + "/repo.git";
  }
  // The object `rev` names in the repository now.
  Oid Rev(const std::string& rev) {
    std::string hex = Sh(repo_, "git rev-parse " + Quote(rev));
    return Oid::ParseHex(hex.substr(0, 40)).value_or(Oid{});
  }
  std::string Git(const std::string& args) { return Sh(repo_, "git " + args); }
  // The blob id of `content`.
  Oid BlobOf(const std::string& content) {
    std::string hex = Sh(repo_, "printf '%s' " + Quote(content) + " | git hash-object --stdin");
    return Oid::ParseHex(hex.substr(0, 40)).value_or(Oid{});
  }
  static Oid Missing() { return Oid::ParseHex("0123456789abcdef0123456789abcdef01234567").value(); }

  TempDir dir_;
  std::string repo_;
};

// ---------------------------------------------------------------------------------------
// SquashInto

// main: c1 → c2 → c3 (c3 adds dir/c.txt); side → c2.
constexpr std::string_view kSquashScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
printf 'a\n' > a.txt && git add -A && commit 1700000001 -m 'c1'
printf 'b\n' > b.txt && git add -A && commit 1700000002 -m 'c2'
git branch side
mkdir dir && printf 'c\n' > dir/c.txt && git add -A && commit 1700000003 -m 'c3'
cd .. && git clone -q --bare work repo.git
)SH";

class SquashTest : public RepoTest {
 protected:
  void SetUp() override { Build(std::string(kSquashScript)); }
  const Signature squasher_{"Sam Squasher", "sam@example.com", 1700000500, 90};
};

TEST_F(SquashTest, WritesOneParentlessCommitOfTheSameTreeAndMovesTheRef) {
  const Oid head = Rev("main"), tree = Rev("main^{tree}"), side = Rev("side");
  auto squashed = SquashInto(repo_, "refs/heads/main", head, squasher_, "Squash all\n\nbody\n");
  ASSERT_TRUE(squashed) << squashed.error().message;
  EXPECT_NE(*squashed, head);
  EXPECT_EQ(Rev("main"), *squashed);
  EXPECT_EQ(Git("cat-file -t main"), "commit\n");
  EXPECT_EQ(Git("rev-list --count main"), "1\n");
  EXPECT_EQ(Git("log -1 --format='[%P]' main"), "[]\n");
  EXPECT_EQ(Rev("main^{tree}"), tree);
  EXPECT_EQ(Git("ls-tree -r --name-only main"), "a.txt\nb.txt\ndir/c.txt\n");
  EXPECT_EQ(Git("log -1 --format='%an <%ae> %ad|%cn <%ce> %cd' --date=raw main"),
            "Sam Squasher <sam@example.com> 1700000500 +0130|"
            "Sam Squasher <sam@example.com> 1700000500 +0130\n");
  EXPECT_EQ(Git("cat-file commit main | sed '1,/^$/d'"), "Squash all\n\nbody\n");
  EXPECT_EQ(Rev("side"), side) << "other refs stay";
}

TEST_F(SquashTest, RefNoLongerAtHeadIsAConflictAndStays) {
  const Oid head = Rev("main"), stale = Rev("main~1");
  auto squashed = SquashInto(repo_, "refs/heads/main", stale, squasher_, "Squash\n");
  ASSERT_FALSE(squashed);
  EXPECT_EQ(squashed.error().code, ErrorCode::Conflict) << squashed.error().message;
  EXPECT_EQ(Rev("main"), head);
  EXPECT_EQ(Git("rev-list --count main"), "3\n");
}

TEST_F(SquashTest, MissingHeadIsRevisionNotFoundAndBadAuthorIsBadRequest) {
  const Oid head = Rev("main");
  auto missing = SquashInto(repo_, "refs/heads/main", Missing(), squasher_, "Squash\n");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::RevisionNotFound) << missing.error().message;
  auto bad = SquashInto(repo_, "refs/heads/main", head, Signature{"", "", 1700000500, 0}, "S\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::BadRequest) << bad.error().message;
  EXPECT_EQ(Rev("main"), head);
}

// ---------------------------------------------------------------------------------------
// RewriteWithout

// c1 (root, lightweight tag `base`): keep.txt.
// c2: secret.bin, only/deep/copy.bin and data/secret.bin (all the secret blob), data/x.txt;
//     annotated tag v1 (by Tess Tagger), lightweight tag light.
// feature: c2 → f1; refs/pr/1 → feature.
// main: c2 → m1 → merge of feature.
// clean: an orphan root without the secret. solo: an orphan root holding only the secret.
// Authors and committers differ, in names, dates and time zones.
constexpr std::string_view kRewriteScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$((t + 7)) +0200" git commit -q "$@"; }
printf 'keep\n' > keep.txt
git add -A && commit 1700000001 -m 'c1 root'
git tag base
printf 'top secret\n' > secret.bin
mkdir -p only/deep data
printf 'top secret\n' > only/deep/copy.bin
printf 'top secret\n' > data/secret.bin
printf 'x\n' > data/x.txt
git add -A && commit 1700000002 -m 'c2 add secret' -m 'with a body'
GIT_COMMITTER_NAME='Tess Tagger' GIT_COMMITTER_EMAIL=tess@example.com GIT_COMMITTER_DATE='@1700000050 +0100' \
  git tag -a v1 -m 'Release one' -m 'release notes'
git tag light
git checkout -q -b feature
printf 'f\n' > f.txt && git add -A && commit 1700000003 -m 'f1 feature'
git checkout -q main
printf 'keep more\n' > keep.txt && git add -A && commit 1700000004 -m 'm1 main'
GIT_AUTHOR_DATE='@1700000005 +0000' GIT_COMMITTER_DATE='@1700000012 +0300' \
  git merge -q --no-ff feature -m 'Merge feature'
git update-ref refs/pr/1 feature
git checkout -q --orphan clean
git rm -rfq .
printf 'clean\n' > clean.txt && git add -A && commit 1700000006 -m 'clean root'
git checkout -q --orphan solo
git rm -rfq .
printf 'top secret\n' > secret.bin && git add -A && commit 1700000007 -m 'solo root'
git checkout -q main
cd .. && git clone -q --mirror work repo.git
)SH";

// Every commit reachable from `ref`, newest first (topological): everything but ids.
constexpr std::string_view kLogFormat =
    "log --topo-order --date=raw --format='%an|%ae|%ad|%cn|%ce|%cd|%B%n|parents:%p' ";

class RewriteTest : public RepoTest {
 protected:
  void SetUp() override {
    Build(std::string(kRewriteScript));
    secret_ = BlobOf("top secret\n");
  }
  std::string Log(const std::string& ref) {
    // Abbreviated parent ids change with the rewrite: keep only how many there are.
    return Sh(repo_, "git " + std::string(kLogFormat) + Quote(ref) +
                         " | sed -E '/^\\|parents:/ s/[0-9a-f]{7,40}/P/g'");
  }
  Oid secret_;
};

struct Moved {
  std::string name;
  Oid from, to;
  friend bool operator==(const Moved&, const Moved&) = default;
};
void PrintTo(const Moved& m, std::ostream* os) {
  *os << m.name << " " << m.from.Hex() << " → " << m.to.Hex();
}
std::vector<Moved> Sorted(const std::vector<RefRewrite>& in) {
  std::vector<Moved> out;
  for (const auto& r : in) out.push_back({r.name, r.from, r.to});
  std::sort(out.begin(), out.end(), [](const Moved& a, const Moved& b) { return a.name < b.name; });
  return out;
}

TEST_F(RewriteTest, DropsTheBlobFromEveryRefsHistoryKeepingEverythingElse) {
  const std::vector<std::string> moving = {"main", "feature", "refs/pr/1", "v1", "light", "solo"};
  std::vector<std::string> logs_before;
  for (const auto& r : moving) logs_before.push_back(Log(r));
  const Oid main = Rev("main"), feature = Rev("feature"), c2 = Rev("light"), c1 = Rev("base"),
            clean = Rev("clean"), solo = Rev("solo"), v1_tag = Rev("v1");
  const std::string tag_before = Git("cat-file tag v1");
  ASSERT_NE(Git("rev-list --objects --all").find(secret_.Hex()), std::string::npos);

  auto moved = RewriteWithout(repo_, {secret_});
  ASSERT_TRUE(moved) << moved.error().message;

  // The secret is gone from everything the refs reach.
  EXPECT_EQ(Git("rev-list --objects --all").find(secret_.Hex()), std::string::npos);
  EXPECT_EQ(Git("ls-tree -r --name-only main"), "data/x.txt\nf.txt\nkeep.txt\n");
  EXPECT_EQ(Git("ls-tree -r --name-only feature"), "data/x.txt\nf.txt\nkeep.txt\n");
  EXPECT_EQ(Git("ls-tree -r --name-only v1"), "data/x.txt\nkeep.txt\n");
  EXPECT_EQ(Git("ls-tree --name-only main"), "data\nf.txt\nkeep.txt\n")
      << "only/ (left empty) is gone, data/ (not empty) stays";
  EXPECT_EQ(Git("ls-tree --name-only main~1"), "data\nkeep.txt\n");
  EXPECT_EQ(Rev("solo^{tree}").Hex(), kEmptyTree) << "a tree left with nothing is the empty tree";
  EXPECT_EQ(Git("show main:data/x.txt"), "x\n");
  EXPECT_EQ(Git("show main:keep.txt"), "keep more\n");

  // Every moved ref's history: same authors, committers, messages and shape.
  for (size_t i = 0; i < moving.size(); ++i) {
    EXPECT_EQ(Log(moving[i]), logs_before[i]) << moving[i];
  }
  // The merge keeps its two parents: the rewritten m1 and the rewritten feature tip.
  EXPECT_EQ(Git("log -1 --format=%P main"),
            Rev("main^1").Hex() + " " + Rev("feature").Hex() + "\n");
  EXPECT_EQ(Rev("main^2"), Rev("refs/pr/1"));
  EXPECT_EQ(Rev("main~1~1"), Rev("light"));
  EXPECT_EQ(Rev("feature~1"), Rev("light"));
  // The commit before the secret keeps its id.
  EXPECT_EQ(Rev("main~1~1~1"), c1);
  EXPECT_EQ(Git("rev-list --max-parents=0 main"), c1.Hex() + "\n");

  // v1 is still an annotated tag, with the same name, tagger and message, on the new commit.
  EXPECT_EQ(Git("cat-file -t refs/tags/v1"), "tag\n");
  EXPECT_NE(Rev("refs/tags/v1"), v1_tag);
  EXPECT_EQ(Rev("v1^{commit}"), Rev("light"));
  std::string tag_want = tag_before;
  tag_want.replace(tag_want.find(c2.Hex()), 40, Rev("light").Hex());
  EXPECT_EQ(Git("cat-file tag v1"), tag_want);
  EXPECT_EQ(Git("cat-file -t refs/tags/light"), "commit\n") << "a lightweight tag stays one";

  // Refs without the secret in their history stay.
  EXPECT_EQ(Rev("base"), c1);
  EXPECT_EQ(Rev("clean"), clean);

  // One entry per moved ref: commits from and to (a tag's commit, not the tag object).
  EXPECT_EQ(Sorted(*moved), (std::vector<Moved>{
                                {"refs/heads/feature", feature, Rev("feature")},
                                {"refs/heads/main", main, Rev("main")},
                                {"refs/heads/solo", solo, Rev("solo")},
                                {"refs/pr/1", feature, Rev("refs/pr/1")},
                                {"refs/tags/light", c2, Rev("light")},
                                {"refs/tags/v1", c2, Rev("v1^{commit}")},
                            }));
  for (const auto& m : *moved) EXPECT_NE(m.from, m.to) << m.name;
}

TEST_F(RewriteTest, BlobNotInTheHistoryChangesNothing) {
  const std::string refs_before = Git("for-each-ref --format='%(refname) %(objectname)'");
  const std::string objects_before = Git("count-objects");
  auto moved = RewriteWithout(repo_, {Missing(), BlobOf("never committed\n")});
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_TRUE(moved->empty()) << moved->front().name;
  EXPECT_EQ(Git("for-each-ref --format='%(refname) %(objectname)'"), refs_before);
  EXPECT_EQ(Git("count-objects"), objects_before) << "nothing written";
}

TEST_F(RewriteTest, DroppingABlobOfOneBranchLeavesTheOthers) {
  const std::string tags_before = Git("for-each-ref --format='%(refname) %(objectname)' refs/tags");
  const Oid main = Rev("main"), feature = Rev("feature");
  auto moved = RewriteWithout(repo_, {BlobOf("f\n")});  // f.txt, added by f1 only
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(Sorted(*moved), (std::vector<Moved>{
                                {"refs/heads/feature", feature, Rev("feature")},
                                {"refs/heads/main", main, Rev("main")},
                                {"refs/pr/1", feature, Rev("refs/pr/1")},
                            }));
  EXPECT_EQ(Git("for-each-ref --format='%(refname) %(objectname)' refs/tags"), tags_before);
  EXPECT_EQ(Git("ls-tree -r --name-only main"),
            "data/secret.bin\ndata/x.txt\nkeep.txt\nonly/deep/copy.bin\nsecret.bin\n");
  EXPECT_EQ(Rev("feature~1"), Rev("light")) << "f1's parent keeps its id";
  EXPECT_EQ(Git("rev-list --count feature"), "3\n") << "f1 stays, with an unchanged tree";
  EXPECT_EQ(Rev("feature^{tree}"), Rev("light^{tree}"));
}

// ---------------------------------------------------------------------------------------
// LfsAppearances

std::string Canonical(std::string_view seed, uint64_t size) {
  return FormatPointer({Sha256::Of(seed), size});
}

// c1: a.bin (pointer A), notes.txt (a small text file, not a pointer).
// c2: sub/b.bin (pointer B), a-legacy.bin (A again, with a legacy version line: another
//     blob), a-ext.bin (A with an extension line: not a pointer).
// c3: a.bin renamed to moved.bin.
// refs/pr/1 only: c4 adds c.bin (pointer C).
// Committer times are author times + 100.
constexpr std::string_view kLfsScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$((t + 100)) +0000" git commit -q "$@"; }
printf '%s' "$PA" > a.bin
printf '%s\n' 'These notes are long enough to be read as a possible pointer file but are not one;' \
  'a reader should skip them without complaint. More text, more text, more text.' > notes.txt
git add -A && commit 1700000001 -m 'c1'
mkdir sub && printf '%s' "$PB" > sub/b.bin
printf '%s' "$PA_LEGACY" > a-legacy.bin
printf '%s' "$PA_EXT" > a-ext.bin
git add -A && commit 1700000002 -m 'c2'
git mv a.bin moved.bin && commit 1700000003 -m 'c3 rename'
git checkout -q -b side
printf '%s' "$PC" > c.bin && git add -A && commit 1700000004 -m 'c4 on a pull request only'
git update-ref refs/pr/1 side
git checkout -q main && git branch -q -D side
cd .. && git clone -q --mirror work repo.git
)SH";

class LfsScanTest : public RepoTest {
 protected:
  void SetUp() override {
    const std::string a = Canonical("object A", 1000);
    a_legacy_ =
        "version https://hawser.github.com/spec/v1\noid sha256:" + Sha256::Of("object A").Hex() +
        "\nsize 1000\n";
    a_ext_ =
        "version https://git-lfs.github.com/spec/v1\next-0-foo sha256:" + Sha256::Of("ext").Hex() +
        "\noid sha256:" + Sha256::Of("object A").Hex() + "\nsize 1000\n";
    ASSERT_TRUE(ParsePointer(a_legacy_));
    ASSERT_FALSE(ParsePointer(a_ext_));
    Build("export PA=" + Quote(a) + " PA_LEGACY=" + Quote(a_legacy_) + " PA_EXT=" + Quote(a_ext_) +
          " PB=" + Quote(Canonical("object B", 2000)) +
          " PC=" + Quote(Canonical("object C", 3000)) + "\n" + std::string(kLfsScript));
    blob_a_ = BlobOf(a);
    blob_a_legacy_ = BlobOf(a_legacy_);
    blob_b_ = BlobOf(Canonical("object B", 2000));
    blob_c_ = BlobOf(Canonical("object C", 3000));
  }
  static std::vector<std::string> Paths(const std::vector<LfsAppearance>& found) {
    std::vector<std::string> out;
    for (const auto& f : found) out.push_back(f.path);
    return out;
  }
  static constexpr std::chrono::seconds kTimeout{30};
  std::string a_legacy_, a_ext_;
  Oid blob_a_, blob_a_legacy_, blob_b_, blob_c_;
};

TEST_F(LfsScanTest, EachObjectOnceAtItsFirstAppearanceOldestFirst) {
  const Oid c1 = Rev("main~2"), c2 = Rev("main~1"), c4 = Rev("refs/pr/1");
  auto found = LfsAppearances(repo_, {Rev("main"), Rev("refs/pr/1")}, kTimeout);
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(Paths(*found), (std::vector<std::string>{"a.bin", "sub/b.bin", "c.bin"}));

  const LfsAppearance& a = (*found)[0];
  EXPECT_EQ(a.pointer, (Pointer{Sha256::Of("object A"), 1000}));
  EXPECT_EQ(a.blob, blob_a_);
  EXPECT_EQ(a.blobs, (std::vector<Oid>{blob_a_, blob_a_legacy_}))
      << "the legacy pointer names A too; the one with an extension line is no pointer";
  EXPECT_EQ(a.commit, c1);
  EXPECT_EQ(a.time, 1700000101) << "the committer's time";

  const LfsAppearance& b = (*found)[1];
  EXPECT_EQ(b.pointer, (Pointer{Sha256::Of("object B"), 2000}));
  EXPECT_EQ(b.blob, blob_b_);
  EXPECT_EQ(b.blobs, std::vector<Oid>{blob_b_});
  EXPECT_EQ(b.commit, c2);
  EXPECT_EQ(b.time, 1700000102);

  const LfsAppearance& c = (*found)[2];
  EXPECT_EQ(c.pointer, (Pointer{Sha256::Of("object C"), 3000}));
  EXPECT_EQ(c.blob, blob_c_);
  EXPECT_EQ(c.blobs, std::vector<Oid>{blob_c_});
  EXPECT_EQ(c.commit, c4);
  EXPECT_EQ(c.time, 1700000104);
}

TEST_F(LfsScanTest, OnlyWhatTheTipsReach) {
  auto main_only = LfsAppearances(repo_, {Rev("main")}, kTimeout);
  ASSERT_TRUE(main_only) << main_only.error().message;
  EXPECT_EQ(Paths(*main_only), (std::vector<std::string>{"a.bin", "sub/b.bin"}));

  auto first = LfsAppearances(repo_, {Rev("main~2")}, kTimeout);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(Paths(*first), std::vector<std::string>{"a.bin"});
  EXPECT_EQ((*first)[0].blobs, std::vector<Oid>{blob_a_}) << "a-legacy.bin comes later";

  auto none = LfsAppearances(repo_, {}, kTimeout);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST_F(LfsScanTest, MissingTipIsRevisionNotFound) {
  auto found = LfsAppearances(repo_, {Rev("main"), Missing()}, kTimeout);
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ErrorCode::RevisionNotFound) << found.error().message;
}

// A pointer file that only a merge commit adds (a conflict resolution, an "evil merge") is
// in the history all the same. DISABLED: fails today — LfsAppearances runs `git log --raw`
// without --diff-merges/-m, and git log shows no changes of merge commits by default, so
// d.bin is never listed (and a purge with rewrite would leave its pointer in history).
// Enable once src/git/lfs_scan.cc lists merges' changes.
TEST_F(LfsScanTest, PointerAddedByAMergeCommitIsFound) {
  const std::string d = Canonical("object D", 4000);
  Sh(dir_.path(), "export PD=" + Quote(d) + R"SH(
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
git checkout -q -b topic
printf 't\n' > t.txt && git add -A && commit 1700000010 -m 'topic'
git checkout -q main
printf 'm\n' > m.txt && git add -A && commit 1700000011 -m 'main'
git merge -q --no-ff --no-commit topic
printf '%s' "$PD" > d.bin && git add d.bin && commit 1700000012 -m 'merge topic, adding d.bin'
cd .. && git -C repo.git fetch -q ../work '+refs/heads/*:refs/heads/*'
)SH");
  ASSERT_EQ(Git("ls-tree --name-only main d.bin"), "d.bin\n");
  auto found = LfsAppearances(repo_, {Rev("main")}, kTimeout);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(Paths(*found), (std::vector<std::string>{"a.bin", "sub/b.bin", "d.bin"}));
}

}  // namespace
}  // namespace hangar::git

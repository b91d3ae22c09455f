// git::ListRefs and DescribeRefs (history_refs.cc) against git for-each-ref on the same repository:
// names, peeling, commit times and subjects, tag subjects and taggers must be what git prints,
// including multi-line subjects, trailing blanks, nested tags and tags of trees and blobs.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "git/history.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Sh;
using testing::TempDir;

constexpr std::string_view kRefsScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
echo a > a && git add a && commit 1700000001 -m 'first'
echo b > a && git add a && commit 1700000002 --cleanup=verbatim -F - <<'MSG'


  two  lines   
with trailing blanks	

body text
MSG
git branch 'é-branch' && git branch side HEAD~1
git tag light HEAD~1
GIT_COMMITTER_DATE="@1700000010 +0000" git tag -a v1 -m "$(printf 'tag line 1\ntag line 2\n\nbody')"
GIT_COMMITTER_DATE="@1700000011 +0000" git tag -a nested -m 'tag of a tag' v1
git tag -a tree-tag -m 'a tree' 'HEAD^{tree}'
git tag blob-light "$(git rev-parse HEAD:a)"
raw() { git hash-object -t commit -w --stdin --literally; }
tree="$(git rev-parse 'HEAD^{tree}')"
git update-ref refs/pr/1 "$(printf 'tree %s\nauthor A <a> 5 +0000\ncommitter A <a> 6 +0000\n\n\n\na\n   \nb  \n\tc\n\nbody\n' "$tree" | raw)"
git update-ref refs/pr/2 "$(printf 'tree %s\nauthor A <a> 5 +0000\ncommitter A <a> 7 +0000\n\nx\r\ny\r\n\r\nz\n' "$tree" | raw)"
git update-ref refs/pr/3 "$(printf 'tree %s\nauthor A <a> 5 +0000\ncommitter A <a> 8 +0000\n\n' "$tree" | raw)"
cd .. && git clone -q --mirror work repo.git
git -C repo.git symbolic-ref refs/heads/alias refs/heads/main
git -C repo.git symbolic-ref refs/heads/dangling refs/heads/nowhere
)SH";

TEST(HistoryRefsTest, ListRefsAgreesWithForEachRef) {
  TempDir dir;
  Sh(dir.path(), std::string(kRefsScript));
  const std::string repo = dir.path() + "/repo.git";
  // One line per ref git would list, in the fields RefInfo carries.
  const std::string want =
      Sh(repo,
         "git for-each-ref --sort=refname --format='%(refname)|%(objecttype)|%(objectname)|"
         "%(*objecttype)|%(*objectname)|%(committerdate:unix)%(*committerdate:unix)|"
         "%(contents:subject)|%(*contents:subject)|%(taggername)|%(taggeremail)|"
         "%(taggerdate:unix)' | awk -F'|' '$2 == \"commit\" || $4 == \"commit\"'");
  auto refs = ListRefs(repo);
  ASSERT_TRUE(refs) << refs.error().message;
  std::string names;
  for (const RefInfo& r : *refs) names += r.name + (r.described ? " described\n" : "\n");
  // Listing reads no object: every ref is there, the nested, tree and blob tags too.
  EXPECT_EQ(names, Sh(repo, "git for-each-ref --sort=refname --format='%(refname)'"));
  auto described = DescribeRefs(repo, *refs);
  ASSERT_TRUE(described) << described.error().message;
  std::string got;
  for (const RefInfo& r : *refs) {
    EXPECT_TRUE(r.described) << r.name;
    if (r.name == "refs/tags/nested") {  // peeled through v1 to its commit (git's one
      EXPECT_TRUE(r.is_commit);          // level of %(*objecttype) stops at v1)
      EXPECT_EQ(r.commit.Hex(), Sh(repo, "git rev-parse 'nested^{commit}'").substr(0, 40));
      EXPECT_EQ(r.tag_subject, "tag of a tag");
      continue;
    }
    if (!r.is_commit) continue;
    got +=
        r.name + '|' + (r.annotated ? "tag" : "commit") + '|' + r.object.Hex() + '|' +
        (r.annotated ? "commit|" + r.commit.Hex() : "|") + '|' + std::to_string(r.commit_time) +
        '|' + (r.annotated ? r.tag_subject : r.subject) + '|' + (r.annotated ? r.subject : "") +
        '|' +
        (r.tagger ? r.tagger->name + "|<" + r.tagger->email + ">|" + std::to_string(r.tagger->time)
                  : "||") +
        '\n';
  }
  EXPECT_EQ(got, want);
  // The fixture covers what it means to: a folded subject, a nested and a tree tag.
  EXPECT_NE(want.find("|  two  lines    with trailing blanks\t|"), std::string::npos) << want;
  EXPECT_NE(want.find("|a     b   \tc|"), std::string::npos) << want;
  EXPECT_NE(want.find("|x y|"), std::string::npos) << want;
  EXPECT_NE(want.find("refs/heads/alias|"), std::string::npos) << want;
  EXPECT_NE(want.find("|tag line 1 tag line 2|"), std::string::npos) << want;
  EXPECT_EQ(want.find("refs/tags/nested"), std::string::npos);
  EXPECT_EQ(want.find("refs/tags/tree-tag"), std::string::npos);
  EXPECT_EQ(want.find("refs/tags/blob-light"), std::string::npos);
  EXPECT_NE(want.find("refs/pr/1|"), std::string::npos);
}

TEST(HistoryRefsTest, ListRefsOfAMissingRepoIsRepoNotFound) {
  TempDir dir;
  EXPECT_EQ(ListRefs(dir.path() + "/nope.git").error().code, ErrorCode::RepoNotFound);
  std::vector<RefInfo> none;
  EXPECT_EQ(DescribeRefs(dir.path() + "/nope.git", none).error().code, ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace hangar::git

// history_internal::ReadLogEntries (log_entries.cc) against git log on the same commits:
// every field of kEntryFormat, over messages and identities git folds or trims.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "git/history_internal.h"
#include "test_repo.h"

namespace hangar::git::history_internal {
namespace {

using testing::Sh;
using testing::TempDir;

// Raw commits (hash-object --literally) with awkward messages and identities.
constexpr std::string_view kScript = R"SH(
git init -q --bare r.git && cd r.git
tree=$(git mktree </dev/null)
raw() { git hash-object -t commit -w --stdin --literally; }
mk() { printf 'tree %s\n%sauthor %s 1700000001 +0200\ncommitter %s 1700000002 -0130\n%s\n%b' \
  "$tree" "$1" "$2" "$3" "$4" "$5" | raw; }
p=""
for m in 'plain' 'two\nlines\n\nbody' '\n\n  \nafter blanks\nand more  \n\nbody' \
         'trailing   \t\nnext' 'crlf\r\nline\r\n\r\nbody' '   indented\n  lines' '' '\n\n' \
         'tab\tinside' 'é ünïcode\n\nbody' 'no newline at end'; do
  c=$(mk "$p" 'A U Thor <a@example.com>' 'C O Mitter <c@example.com>' '' "$m")
  p="parent $c
"
  echo "$c"
done > ../commits
mk "" '  Spaced  Name   <s@example.com>' 'Bob <b@x>' '' 'spaces' >> ../commits
mk "" 'NoSpace<n@x>' 'Bob <b@x>' '' 'nospace' >> ../commits
mk "" 'Tabs	Name	 <t@x>' 'Odd <> <o@x>' '' 'tabs' >> ../commits
mk "" 'Latin <l@x>' 'Bob <b@x>' 'encoding ISO-8859-1
' 'latin' >> ../commits
)SH";

TEST(LogEntriesTest, EqualToGitLog) {
  TempDir dir;
  Sh(dir.path(), std::string(kScript));
  const std::string repo = dir.path() + "/r.git";
  std::vector<Oid> ids;
  std::string list = Sh(dir.path(), "cat commits");
  for (size_t at = 0; at + 40 <= list.size(); at += 41)
    ids.push_back(*Oid::ParseHex(list.substr(at, 40)));
  ASSERT_EQ(ids.size(), 15u);
  const std::vector<Oid> utf8(ids.begin(), ids.end() - 1);
  auto got = ReadLogEntries(repo, utf8);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), utf8.size());
  std::string args;
  for (const Oid& id : utf8) args += " " + id.Hex();
  const std::string want =
      Sh(repo, "git log --no-walk=unsorted -z --format='" + std::string(kEntryFormat) + "'" + args);
  std::string mine;
  for (const LogEntry& e : *got) {  // git -z ends each record with a NUL
    mine += e.id.Hex() + '\0';
    for (size_t i = 0; i < e.parents.size(); ++i) mine += (i ? " " : "") + e.parents[i].Hex();
    mine += '\0' + e.author.name + '\0' + e.author.email + '\0' + std::to_string(e.author.time) +
            '\0' + e.committer.name + '\0' + e.committer.email + '\0' +
            std::to_string(e.committer.time) + '\0' + e.subject + '\0';
  }
  EXPECT_EQ(mine, want);
  EXPECT_NE(want.find("after blanks and more"), std::string::npos);  // the fixture folds
  // A message in another encoding is left to git (it re-encodes).
  EXPECT_FALSE(ReadLogEntries(repo, std::vector<Oid>{ids.back()}));
  // An unknown commit: left to git, which reports it.
  EXPECT_FALSE(ReadLogEntries(repo, std::vector<Oid>{*Oid::ParseHex(std::string(40, '1'))}));
}

}  // namespace
}  // namespace hangar::git::history_internal

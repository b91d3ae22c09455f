// git/path_log and git::Log's use of it (issue #4): for every branch head and every path
// (files, directories, missing paths, non-ASCII and high-bit names) of a history with
// merges of every kind, the walker's commits equal `git log --format=%H <start> -- <path>`
// in full and in skip/limit windows, on a full graph, a graph older than the newest
// commits, and a split chain; no graph, no Bloom filters, a corrupt graph, grafts and
// replace refs make it unavailable; Log() pages equal git's field by field.

#include "git/path_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "git/history.h"
#include "path_log_repos.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::GetPathLogRepos;
using testing::Quote;
using testing::Sh;
using testing::TempDir;

using Key = std::pair<std::string, std::string>;  // start, path

// git's answer for every (start, path), from one shell run.
const std::map<Key, std::vector<std::string>>& Expected() {
  static const auto expected = [] {
    const auto& r = GetPathLogRepos();
    std::string script;
    for (const auto& s : r.starts)
      for (const auto& p : r.paths)
        script += "printf '\\001\\n'; git log --format=%H " + s + " -- " + Quote(p) + "\n";
    std::string out = Sh(r.Repo("nograph"), script);
    std::map<Key, std::vector<std::string>> m;
    size_t at = 0;
    for (const auto& s : r.starts) {
      for (const auto& p : r.paths) {
        at = out.find('\1', at) + 2;
        size_t end = std::min(out.find('\1', at), out.size());
        auto& ids = m[{s, p}];
        for (size_t i = at; i + 40 <= end; i += 41) ids.push_back(out.substr(i, 40));
        at = end;
      }
    }
    return m;
  }();
  return expected;
}

std::vector<std::string> Hex(const std::vector<Oid>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) out.push_back(id.Hex());
  return out;
}

class PathLogTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PathLogTest, EqualsGitLog) {
  const auto& r = GetPathLogRepos();
  const std::string repo = r.Repo(GetParam());
  size_t nonempty = 0, merges_seen = 0;
  for (const auto& [key, want] : Expected()) {
    const auto& [start, path] = key;
    auto got = PathLog(repo, *Oid::ParseHex(start), path, 0, 10000);
    ASSERT_TRUE(got) << path;
    ASSERT_EQ(Hex(*got), want) << "git log " << start << " -- " << path;
    nonempty += !want.empty();
    merges_seen += want.size() > 3;
    // Windows: every skip up to past the end, a few limits.
    for (size_t skip = 0; skip <= want.size() + 1; ++skip) {
      for (size_t count : {1, 2, 3}) {
        auto window = PathLog(repo, *Oid::ParseHex(start), path, skip, count);
        ASSERT_TRUE(window);
        std::vector<std::string> slice(want.begin() + std::min(skip, want.size()),
                                       want.begin() + std::min(skip + count, want.size()));
        ASSERT_EQ(Hex(*window), slice) << path << " skip " << skip << " count " << count;
      }
    }
  }
  EXPECT_GT(nonempty, Expected().size() / 3);
  EXPECT_GT(merges_seen, 0u);
}

INSTANTIATE_TEST_SUITE_P(Graphs, PathLogTest, ::testing::Values("full", "single", "split"));

TEST(PathLog, UnavailableWithoutGraphOrFilters) {
  const auto& r = GetPathLogRepos();
  Oid main = *Oid::ParseHex(Sh(r.Repo("full"), "git rev-parse main").substr(0, 40));
  EXPECT_FALSE(PathLog(r.Repo("nograph"), main, "src/a.py", 0, 10));
  EXPECT_FALSE(PathLog(r.Repo("nobloom"), main, "src/a.py", 0, 10));
  EXPECT_TRUE(PathLog(r.Repo("full"), main, "src/a.py", 0, 10));
  EXPECT_FALSE(PathLog(r.Repo("full"), Oid{}, "src/a.py", 0, 10));  // no such commit
  EXPECT_FALSE(PathLog(r.Repo("full"), main, "", 0, 10));
}

// A copy of full.git changed by `script` (run inside it).
std::string Variant(const TempDir& tmp, const std::string& script) {
  const std::string copy = tmp.path() + "/copy.git";
  Sh(tmp.path(), "cp -r " + Quote(GetPathLogRepos().Repo("full")) + " copy.git");
  Sh(copy, "chmod -R u+w . && " + script);
  return copy;
}

TEST(PathLog, UnavailableWhenGitWouldRewriteHistory) {
  const auto& r = GetPathLogRepos();
  Oid main = *Oid::ParseHex(Sh(r.Repo("full"), "git rev-parse main").substr(0, 40));
  for (std::string script :
       {"git replace -f $(git rev-parse main~1) $(git rev-parse main~2)",
        "git replace -f $(git rev-parse main~1) $(git rev-parse main~2) && git pack-refs --all",
        "mkdir -p info && git rev-parse main~1 > info/grafts", "git rev-parse main~1 > shallow",
        "truncate -s 5000 objects/info/commit-graph",
        "printf 'CGPH\\001\\001\\003\\000' | dd of=objects/info/commit-graph conv=notrunc bs=1 "
        "seek=0 2>/dev/null && printf '\\377' | dd of=objects/info/commit-graph conv=notrunc bs=1 "
        "seek=20 2>/dev/null"}) {
    TempDir tmp;
    std::string repo = Variant(tmp, script);
    EXPECT_FALSE(PathLog(repo, main, "src/a.py", 0, 10)) << script;
    // Log falls back to git log and still answers.
    auto page = Log(repo, main, "README.md", 0, 100);
    ASSERT_TRUE(page) << page.error().message;
    EXPECT_FALSE(page->entries.empty());
  }
}

void ExpectSamePage(const LogPage& a, const LogPage& b, const std::string& what) {
  ASSERT_EQ(a.entries.size(), b.entries.size()) << what;
  EXPECT_EQ(a.has_more, b.has_more) << what;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const LogEntry &x = a.entries[i], &y = b.entries[i];
    EXPECT_EQ(x.id, y.id) << what;
    EXPECT_EQ(x.parents, y.parents) << what;
    EXPECT_EQ(x.author.name, y.author.name) << what;
    EXPECT_EQ(x.author.email, y.author.email) << what;
    EXPECT_EQ(x.author.time, y.author.time) << what;
    EXPECT_EQ(x.committer.email, y.committer.email) << what;
    EXPECT_EQ(x.committer.time, y.committer.time) << what;
    EXPECT_EQ(x.subject, y.subject) << what;
  }
}

// Log on a graph repository (walker + git --no-walk) equals Log on one without a graph
// (plain git log), pages and has_more included.
TEST(PathLog, LogPagesEqualGitLogPages) {
  const auto& r = GetPathLogRepos();
  Oid main = *Oid::ParseHex(Sh(r.Repo("full"), "git rev-parse main").substr(0, 40));
  for (const std::string path :
       {"src/a.py", "README.md", "docs", "LICENSE", "nope", "données/été.txt", "thing"}) {
    for (auto [skip, limit] :
         {std::pair<size_t, size_t>{0, 1}, {0, 3}, {1, 2}, {2, 100}, {0, 1000}, {5, 5}, {50, 10}}) {
      auto want = Log(r.Repo("nograph"), main, path, skip, limit);
      ASSERT_TRUE(want) << want.error().message;
      for (const char* variant : {"full", "single", "split"}) {
        auto got = Log(r.Repo(variant), main, path, skip, limit);
        ASSERT_TRUE(got) << got.error().message;
        ExpectSamePage(*got, *want,
                       std::string(variant) + " " + path + " skip " + std::to_string(skip) +
                           " limit " + std::to_string(limit));
      }
    }
  }
  // With signature verification asked for, the fields still line up.
  SignatureCheck check{true, ""};
  auto want = Log(r.Repo("nograph"), main, "src", 0, 5, check);
  auto got = Log(r.Repo("full"), main, "src", 0, 5, check);
  ASSERT_TRUE(want && got);
  ExpectSamePage(*got, *want, "verify");
  ASSERT_FALSE(got->entries.empty());
  EXPECT_TRUE(got->entries[0].signature.has_value());
}

}  // namespace
}  // namespace hangar::git

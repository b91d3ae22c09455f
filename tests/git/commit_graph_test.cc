// git/commit_graph: murmur3 against published vectors, the reader against what git says
// about every commit (tree, time, parents, in single files and split chains), Bloom filters
// git wrote (no false negatives, real negatives), and malformed files (truncated, mutated,
// unknown Bloom hash version): no crash, "unavailable" or "maybe".

#include "git/commit_graph.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "path_log_repos.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::GetPathLogRepos;
using testing::Sh;
using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces `dir`/objects/info/commit-graph with `bytes`.
void WriteGraph(const std::string& dir, const std::string& bytes) {
  std::filesystem::create_directories(dir + "/objects/info");
  std::filesystem::remove(dir + "/objects/info/commit-graph");
  std::ofstream(dir + "/objects/info/commit-graph", std::ios::binary) << bytes;
}

// The offset of chunk `id` in a graph file's bytes (gitformat-chunk table), or 0.
size_t ChunkOffset(const std::string& g, std::string_view id) {
  auto be = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = v << 8 | uint8_t(g[at + i]);
    return v;
  };
  for (size_t i = 0, chunks = uint8_t(g[6]); i < chunks; ++i)
    if (g.compare(8 + 12 * i, 4, id) == 0) return be(8 + 12 * i + 4, 8);
  return 0;
}

TEST(BloomMurmur3, MatchesPublishedVectors) {
  // murmur3 x86_32 reference values; version 2 is plain murmur3.
  EXPECT_EQ(BloomMurmur3("", 0, 2), 0u);
  EXPECT_EQ(BloomMurmur3("", 1, 2), 0x514E28B7u);
  EXPECT_EQ(BloomMurmur3("", 0xffffffff, 2), 0x81F16F39u);
  EXPECT_EQ(BloomMurmur3(std::string(4, '\0'), 0, 2), 0x2362F9DEu);
  EXPECT_EQ(BloomMurmur3("aaaa", 0x9747b28c, 2), 0x5A97808Au);
  EXPECT_EQ(BloomMurmur3("abc", 0, 2), 0xB3DD93FAu);
  EXPECT_EQ(BloomMurmur3("Hello, world!", 0x9747b28c, 2), 0x24884CBAu);
  EXPECT_EQ(BloomMurmur3("The quick brown fox jumps over the lazy dog", 0x9747b28c, 2),
            0x2FA826CDu);
  EXPECT_EQ(BloomMurmur3("\xff\xff\xff\xff", 0, 2), 0x76293B50u);
  // Version 1 agrees on ASCII and differs once a byte has its high bit set.
  for (std::string_view s : {"", "a", "ab", "abc", "src/a.py", "README.md", "a/b/c/d/e"})
    EXPECT_EQ(BloomMurmur3(s, 0x293ae76f, 1), BloomMurmur3(s, 0x293ae76f, 2)) << s;
  for (std::string_view s : {"été", "\xff", "ab\x80", "hi\xff\xfe.bin", "donn\xc3\xa9"})
    EXPECT_NE(BloomMurmur3(s, 0x293ae76f, 1), BloomMurmur3(s, 0x293ae76f, 2)) << s;
}

TEST(BloomKeys, PathAndLeadingDirectories) {
  BloomKeys keys("a/b/c.txt");
  ASSERT_EQ(keys.For(1).size(), 3u);
  EXPECT_EQ(keys.For(1)[0].h0, BloomMurmur3("a/b/c.txt", 0x293ae76f, 1));
  EXPECT_EQ(keys.For(1)[1].h1, BloomMurmur3("a/b", 0x7e646e2c, 1));
  EXPECT_EQ(keys.For(2)[2].h0, BloomMurmur3("a", 0x293ae76f, 2));
  EXPECT_EQ(BloomKeys("LICENSE").For(2).size(), 1u);
}

TEST(BloomMaybeContains, EmptyIsMaybeAndFullIsMaybe) {
  BloomKeys::Hash key{12345, 678};
  EXPECT_TRUE(BloomMaybeContains({}, key, 7));
  const uint8_t ones[1] = {0xff}, zeros[8] = {};
  EXPECT_TRUE(BloomMaybeContains(ones, key, 7));
  EXPECT_FALSE(BloomMaybeContains(zeros, key, 7));
}

class CommitGraphTest : public ::testing::TestWithParam<std::string> {};

// Every commit git knows: in the graph (unless written later) with git's tree, committer
// time and parents; and every path its first-parent diff touches passes its filter.
TEST_P(CommitGraphTest, AgreesWithGit) {
  const auto& r = GetPathLogRepos();
  const std::string repo = r.Repo(GetParam());
  auto graph = CommitGraph::Open(repo);
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->layers(), GetParam() == "split" ? 2u : 1u);
  EXPECT_TRUE(graph->has_bloom());
  std::string log = Sh(repo, "git log --all --format='%H %T %ct %P'");
  size_t in_graph = 0, total = 0;
  for (std::istringstream lines(log); !lines.eof();) {
    std::string line;
    if (!std::getline(lines, line) || line.empty()) continue;
    ++total;
    std::istringstream f(line);
    std::string id, tree, parent;
    int64_t time = 0;
    f >> id >> tree >> time;
    auto pos = graph->Find(*Oid::ParseHex(id));
    if (!pos) continue;
    ++in_graph;
    EXPECT_EQ(graph->CommitAt(*pos).Hex(), id);
    EXPECT_EQ(graph->TreeAt(*pos).Hex(), tree);
    EXPECT_EQ(graph->TimeAt(*pos), time);
    std::vector<CommitGraph::Pos> parents;
    ASSERT_TRUE(graph->Parents(*pos, parents));
    std::vector<std::string> want, got;
    while (f >> parent) want.push_back(parent);
    for (auto p : parents) got.push_back(graph->CommitAt(p).Hex());
    EXPECT_EQ(got, want) << id;
  }
  EXPECT_EQ(in_graph, graph->size());
  if (GetParam() == "full")
    EXPECT_EQ(in_graph, total);
  else
    EXPECT_LT(in_graph, total);  // phase 3 came after the graph
  EXPECT_FALSE(graph->Find(Oid{}));

  // "\1<commit>" then the NUL-separated paths of its diff against its first parent.
  std::string diffs = Sh(
      repo,
      "for c in $(git rev-list --all); do printf '\\001%s\\000' $c;"
      " if git rev-parse -q --verify $c^2 >/dev/null; then git diff-tree -z -r --name-only $c^1 $c;"
      " else git diff-tree -z -r --name-only --no-commit-id --root $c; fi; done");
  std::optional<CommitGraph::Pos> pos;
  size_t checked = 0, absent = 0, excluded = 0;
  for (size_t start = 0; start < diffs.size();) {
    size_t end = std::min(diffs.find('\0', start), diffs.size());
    std::string tok = diffs.substr(start, end - start);
    start = end + 1;
    if (tok.starts_with('\1')) {
      pos = graph->Find(*Oid::ParseHex(tok.substr(1)));
      if (!pos) continue;
      // A path no commit touches: mostly excluded (the 601-path commit's filter says maybe).
      for (int i = 0; i < 4; ++i, ++absent)
        excluded += !graph->MaybeChanged(*pos, BloomKeys("zz/none" + std::to_string(i)));
      continue;
    }
    if (!pos || tok.empty()) continue;
    EXPECT_TRUE(graph->MaybeChanged(*pos, BloomKeys(tok))) << tok;
    ++checked;
  }
  EXPECT_GT(checked, 600u);
  EXPECT_GT(excluded, absent * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(Graphs, CommitGraphTest, ::testing::Values("full", "single", "split"));

TEST(CommitGraph, NoGraphOrNoFilters) {
  const auto& r = GetPathLogRepos();
  EXPECT_FALSE(CommitGraph::Open(r.Repo("nograph")));
  EXPECT_FALSE(CommitGraph::Open("/nonexistent"));
  auto plain = CommitGraph::Open(r.Repo("nobloom"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->has_bloom());
  EXPECT_TRUE(plain->MaybeChanged(0, BloomKeys("nope")));
}

TEST(CommitGraph, UnknownBloomVersionMeansNoFilters) {
  TempDir tmp;
  std::string g = ReadAll(GetPathLogRepos().Repo("full") + "/objects/info/commit-graph");
  size_t bdat = ChunkOffset(g, "BDAT");
  ASSERT_GT(bdat, 0u);
  g[bdat + 3] = 3;  // hash version 3
  WriteGraph(tmp.path(), g);
  auto graph = CommitGraph::Open(tmp.path());
  ASSERT_TRUE(graph);
  EXPECT_FALSE(graph->has_bloom());
  g[bdat + 3] = 2;  // version 2: read, with unsigned-char hashing
  WriteGraph(tmp.path(), g);
  graph = CommitGraph::Open(tmp.path());
  ASSERT_TRUE(graph);
  EXPECT_TRUE(graph->has_bloom());
}

TEST(CommitGraph, TruncatedFilesAreUnavailable) {
  TempDir tmp;
  const std::string g = ReadAll(GetPathLogRepos().Repo("full") + "/objects/info/commit-graph");
  for (size_t len : {size_t(0), size_t(4), size_t(8), size_t(40), size_t(100), size_t(1200),
                     g.size() / 2, g.size() - 21, g.size() - 1}) {
    WriteGraph(tmp.path(), g.substr(0, len));
    EXPECT_FALSE(CommitGraph::Open(tmp.path())) << len;
  }
  WriteGraph(tmp.path(), g + "trailing");
  EXPECT_FALSE(CommitGraph::Open(tmp.path()));  // chunk table no longer ends at the trailer
}

// Random byte changes anywhere: Open and every accessor stay within the mapping.
TEST(CommitGraph, MutatedFilesDoNotCrash) {
  TempDir tmp;
  const std::string g = ReadAll(GetPathLogRepos().Repo("full") + "/objects/info/commit-graph");
  std::mt19937 rng(42);
  BloomKeys keys("src/a.py");
  size_t opened = 0;
  for (int round = 0; round < 400; ++round) {
    std::string bad = g;
    const size_t head = 8 + 12 * 10;
    for (int i = 0, n = 1 + int(rng() % 6); i < n; ++i) {
      size_t at = round % 2 ? rng() % head : rng() % bad.size();
      bad[at] = char(rng());
    }
    WriteGraph(tmp.path(), bad);
    auto graph = CommitGraph::Open(tmp.path());
    if (!graph) continue;
    ++opened;
    std::vector<CommitGraph::Pos> parents;
    for (CommitGraph::Pos p = 0; p < graph->size(); ++p) {
      parents.clear();
      (void)graph->Parents(p, parents);
      (void)graph->TimeAt(p);
      (void)graph->MaybeChanged(p, keys);
      (void)graph->Find(graph->CommitAt(p));
    }
  }
  EXPECT_GT(opened, 0u);
}

}  // namespace
}  // namespace hangar::git

#include "git/repo_reader.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "git/pointer.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Quote;
using testing::Sh;
using testing::TempDir;

// One fixture repository for the whole suite (building it runs ~40 git commands).
class RepoReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    repo_ = new std::string(testing::BuildFixtureRepo(tmp_->path()));
  }
  static void TearDownTestSuite() {
    delete repo_;
    delete tmp_;
  }
  // Output of `git <args>` in the fixture repo, trailing newline removed.
  static std::string Git(const std::string& args) {
    std::string out = Sh(*repo_, "git " + args);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  static Oid GitOid(const std::string& rev) {
    auto oid = Oid::ParseHex(Git("rev-parse --verify " + Quote(rev)));
    EXPECT_TRUE(oid.has_value()) << rev;
    return oid.value_or(Oid{});
  }
  Oid Resolve(std::string_view rev) {
    auto r = reader_.ResolveRevision(*repo_, rev);
    EXPECT_TRUE(r.has_value()) << rev << ": " << (r ? "" : r.error().message);
    return r ? *r : Oid{};
  }

  static TempDir* tmp_;
  static std::string* repo_;
  RepoReader reader_;
};
TempDir* RepoReaderTest::tmp_ = nullptr;
std::string* RepoReaderTest::repo_ = nullptr;

TEST_F(RepoReaderTest, ResolvesEveryKindOfRevision) {
  Oid main = GitOid("main");
  EXPECT_EQ(Resolve("HEAD"), main);
  EXPECT_EQ(Resolve("main"), main);
  EXPECT_EQ(Resolve("refs/heads/main"), main);
  EXPECT_EQ(Resolve("feature/x"), GitOid("feature/x"));
  EXPECT_NE(GitOid("feature/x"), main);
  // Annotated tag: peeled to its commit, not the tag object.
  EXPECT_NE(GitOid("v1.0"), GitOid("v1.0^{commit}"));
  EXPECT_EQ(Resolve("v1.0"), GitOid("v1.0^{commit}"));
  EXPECT_EQ(Resolve("refs/tags/v1.0"), GitOid("v1.0^{commit}"));
  EXPECT_EQ(Resolve("light"), GitOid("light"));
  EXPECT_EQ(Resolve("refs/pr/1"), GitOid("refs/pr/1"));
  EXPECT_EQ(Resolve("refs/convert/parquet"), GitOid("main~1"));
  std::string full = main.Hex();
  EXPECT_EQ(Resolve(full), main);
  EXPECT_EQ(Resolve(GitOid("main~3").Hex()), GitOid("main~3"));
  EXPECT_EQ(Resolve(full.substr(0, 7)), main);
  EXPECT_EQ(Resolve(full.substr(0, 5)), main);
}

TEST_F(RepoReaderTest, UnknownOrInvalidRevisionsAreRevisionNotFound) {
  std::string tree_hex = GitOid("main^{tree}").Hex();
  for (std::string_view rev :
       {std::string_view("nope"), std::string_view("v9"), std::string_view(""),
        std::string_view("main..feature/x"), std::string_view("main\nx"),
        std::string_view("ma\0in", 5), std::string_view("refs/heads/../main"),
        std::string_view("refs/remotes/origin/main"), std::string_view("main~1"),
        std::string_view("main^"), std::string_view("abcd"),
        std::string_view("0000000000000000000000000000000000000000"), std::string_view(tree_hex),
        std::string_view("-n"), std::string_view("refs/pr/99")}) {
    auto r = reader_.ResolveRevision(*repo_, rev);
    ASSERT_FALSE(r.has_value()) << rev;
    EXPECT_EQ(r.error().code, ErrorCode::RevisionNotFound) << rev;
  }
  auto r = reader_.ResolveRevision(*repo_, "v9");
  EXPECT_EQ(r.error().message, "Invalid rev id: v9");
  auto missing = reader_.ResolveRevision(tmp_->path() + "/missing.git", "main");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
}

TEST_F(RepoReaderTest, ListRefsMatchesForEachRef) {
  auto refs = reader_.ListRefs(*repo_);
  ASSERT_TRUE(refs.has_value()) << refs.error().message;
  std::string expected =
      Git("for-each-ref --sort=refname --format='%(refname) %(*objectname)%(objectname)'");
  // For annotated tags %(*objectname) is the commit; fix up "<peeled><tag>" to "<peeled>".
  std::ostringstream got;
  for (const Ref& r : *refs) got << r.name << " " << r.target.Hex() << "\n";
  std::istringstream want_lines(expected);
  std::ostringstream want;
  for (std::string line; std::getline(want_lines, line);)
    want << line.substr(0, line.find(' ') + 41) << "\n";
  EXPECT_EQ(got.str(), want.str());
  EXPECT_EQ(refs->size(), 6u);  // main, feature/x, light, v1.0, pr/1, convert/parquet
}

TEST_F(RepoReaderTest, DefaultBranch) {
  auto b = reader_.DefaultBranch(*repo_);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->value_or(""), "main");
}

// Parses `git ls-tree -r -t -l -z --full-tree <rev> [dir]` into sorted entries.
std::vector<TreeEntry> GitLsTree(const std::string& repo, const std::string& rev,
                                 const std::string& dir, bool recursive) {
  std::string out =
      Sh(repo, "git ls-tree -l -z --full-tree " + std::string(recursive ? "-r -t " : "") + rev +
                   (dir.empty() ? "" : " " + Quote(dir + "/")));
  std::vector<TreeEntry> entries;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\0', pos);
    std::string rec = out.substr(pos, end - pos);
    pos = end + 1;
    size_t tab = rec.find('\t');
    std::istringstream meta(rec.substr(0, tab));
    std::string mode, type, oid, size;
    meta >> mode >> type >> oid >> size;
    TreeEntry e;
    e.path = rec.substr(tab + 1);
    e.is_dir = type == "tree";
    e.oid = *Oid::ParseHex(oid);
    e.size = size == "-" ? 0 : std::stoull(size);
    e.mode = static_cast<uint32_t>(std::stoul(mode, nullptr, 8));
    // ls-tree -r -t also lists the trees leading to `dir`; we list only what is below it.
    if (!dir.empty() && e.path.rfind(dir + "/", 0) != 0) continue;
    entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(),
            [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  return entries;
}

void ExpectSameEntries(const std::vector<TreeEntry>& got, const std::vector<TreeEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].path, want[i].path);
    EXPECT_EQ(got[i].is_dir, want[i].is_dir) << got[i].path;
    EXPECT_EQ(got[i].oid, want[i].oid) << got[i].path;
    EXPECT_EQ(got[i].size, want[i].size) << got[i].path;
    EXPECT_EQ(got[i].mode, want[i].mode) << got[i].path;
  }
}

TEST_F(RepoReaderTest, ListTreeMatchesLsTree) {
  Oid main = GitOid("main");
  for (bool recursive : {true, false}) {
    for (std::string dir : {"", "a", "a/b", "données", "dir with space"}) {
      SCOPED_TRACE(dir + (recursive ? " recursive" : ""));
      auto got = reader_.ListTree(*repo_, main, dir, recursive);
      ASSERT_TRUE(got.has_value()) << got.error().message;
      ExpectSameEntries(*got, GitLsTree(*repo_, main.Hex(), dir, recursive));
    }
  }
  auto all = reader_.ListTree(*repo_, main, "", true);
  ASSERT_TRUE(all.has_value());
  std::vector<std::string> paths;
  for (const auto& e : *all) paths.push_back(e.path);
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
  // Bytewise: the directory "a" sorts before the file "a.b", then "a/…".
  auto a = std::find(paths.begin(), paths.end(), "a");
  ASSERT_NE(a, paths.end());
  EXPECT_EQ(*(a + 1), "a.b");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "données/été.txt"), paths.end());
}

TEST_F(RepoReaderTest, ListTreeRejectsFilesAndMissingDirs) {
  Oid main = GitOid("main");
  for (std::string_view dir : {"README.md", "nope", "a/b/c/deep.txt", "../a", "a//b"}) {
    auto r = reader_.ListTree(*repo_, main, dir, false);
    ASSERT_FALSE(r.has_value()) << dir;
    EXPECT_EQ(r.error().code, ErrorCode::EntryNotFound) << dir;
  }
  auto r = reader_.ListTree(*repo_, GitOid("main^{tree}"), "", false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::RevisionNotFound);
}

TEST_F(RepoReaderTest, LookupFilesDirsAndRoot) {
  Oid main = GitOid("main");
  auto root = reader_.Lookup(*repo_, main, "");
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->is_dir);
  EXPECT_EQ(root->oid, GitOid("main^{tree}"));

  auto file = reader_.Lookup(*repo_, main, "données/été.txt");
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_FALSE(file->is_dir);
  EXPECT_EQ(file->oid, GitOid("main:données/été.txt"));
  EXPECT_EQ(file->size, 7u);
  EXPECT_EQ(file->mode, 0100644u);
  EXPECT_EQ(file->path, "données/été.txt");

  auto dir = reader_.Lookup(*repo_, main, "dir with space/");
  ASSERT_TRUE(dir.has_value());
  EXPECT_TRUE(dir->is_dir);
  EXPECT_EQ(dir->oid, GitOid("main:dir with space"));

  auto exec = reader_.Lookup(*repo_, main, "run.sh");
  ASSERT_TRUE(exec.has_value());
  EXPECT_EQ(exec->mode, 0100755u);
  auto link = reader_.Lookup(*repo_, main, "link.md");
  ASSERT_TRUE(link.has_value());
  EXPECT_EQ(link->mode, 0120000u);

  for (std::string_view p : {"nope.txt", "a/b/missing", "README.md/x", "/README.md", "a/../a.b"}) {
    auto r = reader_.Lookup(*repo_, main, p);
    ASSERT_FALSE(r.has_value()) << p;
    EXPECT_EQ(r.error().code, ErrorCode::EntryNotFound) << p;
  }
  // Present on main, not on the older commit.
  auto old = reader_.Lookup(*repo_, GitOid("main~4"), "run.sh");
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().code, ErrorCode::EntryNotFound);
}

TEST_F(RepoReaderTest, ReadAndOpenBlobs) {
  Oid main = GitOid("main");
  auto entry = reader_.Lookup(*repo_, main, "model.safetensors");
  ASSERT_TRUE(entry.has_value());
  auto text = reader_.ReadBlob(*repo_, entry->oid, 1024);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, testing::FixturePointerText());
  EXPECT_EQ(entry->size, text->size());
  auto pointer = ParsePointer(*text);
  ASSERT_TRUE(pointer.has_value());
  EXPECT_EQ(pointer->size, 12345u);

  Oid big = GitOid("main:big.txt");
  std::string big_text = Sh(*repo_, "git cat-file blob main:big.txt");
  ASSERT_EQ(big_text.size(), 8000u);
  auto too_big = reader_.ReadBlob(*repo_, big, 7999);
  ASSERT_FALSE(too_big.has_value());
  EXPECT_EQ(too_big.error().code, ErrorCode::PayloadTooLarge);
  auto whole = reader_.ReadBlob(*repo_, big, 8000);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(*whole, big_text);

  auto src = reader_.OpenBlob(*repo_, big, 0, std::nullopt);
  ASSERT_TRUE(src.has_value());
  EXPECT_EQ((*src)->Size(), 8000u);
  EXPECT_EQ(ReadAll(**src, 1 << 20).value(), big_text);

  auto part = reader_.OpenBlob(*repo_, big, 4, 10);
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ((*part)->Size(), 10u);
  EXPECT_EQ(ReadAll(**part, 1 << 20).value(), big_text.substr(4, 10));

  auto tail = reader_.OpenBlob(*repo_, big, 7996, 100);
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(ReadAll(**tail, 1 << 20).value(), "big\n");
  auto end = reader_.OpenBlob(*repo_, big, 8000, std::nullopt);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ((*end)->Size(), 0u);

  auto past = reader_.OpenBlob(*repo_, big, 8001, std::nullopt);
  ASSERT_FALSE(past.has_value());
  EXPECT_EQ(past.error().code, ErrorCode::RangeNotSatisfiable);
  auto not_blob = reader_.ReadBlob(*repo_, main, 1 << 20);
  ASSERT_FALSE(not_blob.has_value());
  EXPECT_EQ(not_blob.error().code, ErrorCode::EntryNotFound);
  auto missing = reader_.OpenBlob(*repo_, Oid{}, 0, std::nullopt);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::EntryNotFound);
}

TEST_F(RepoReaderTest, ReadCommitMatchesGitLog) {
  Oid c = GitOid("main~3");
  auto info = reader_.ReadCommit(*repo_, c);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->id, c);
  EXPECT_EQ(info->summary, "Add files");
  EXPECT_EQ(info->message, "Add files\n\nA longer body line.\n");
  EXPECT_EQ(info->author_name, "Alice Author");
  EXPECT_EQ(info->author_email, "alice@example.com");
  EXPECT_EQ(info->committer_name, "Bob Committer");
  EXPECT_EQ(info->committer_email, "bob@example.com");
  EXPECT_EQ(info->author_time, 1700000100);
  EXPECT_EQ(info->committer_time, 1700000100);
  EXPECT_EQ(info->tree, GitOid("main~3^{tree}"));
  ASSERT_EQ(info->parents.size(), 1u);
  EXPECT_EQ(info->parents[0], GitOid("main~4"));
  auto root = reader_.ReadCommit(*repo_, GitOid("main~4"));
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->parents.empty());
  auto tree = reader_.ReadCommit(*repo_, GitOid("main^{tree}"));
  ASSERT_FALSE(tree.has_value());
  EXPECT_EQ(tree.error().code, ErrorCode::RevisionNotFound);
}

TEST_F(RepoReaderTest, LogMatchesGit) {
  for (std::string rev : {"main", "feature/x", "v1.0"}) {
    Oid start = Resolve(rev);
    for (auto [skip, limit] : {std::pair<size_t, size_t>{0, 100}, {0, 2}, {2, 2}, {5, 10}}) {
      auto log = reader_.Log(*repo_, start, skip, limit);
      ASSERT_TRUE(log.has_value());
      std::string got;
      for (const auto& c : *log) got += c.id.Hex() + " " + c.summary + "\n";
      std::string want = Sh(*repo_, "git log --format='%H %s' --skip=" + std::to_string(skip) +
                                        " -n " + std::to_string(limit) + " " + rev);
      EXPECT_EQ(got, want) << rev << " skip " << skip << " limit " << limit;
    }
  }
}

TEST_F(RepoReaderTest, LastCommitTouchingMatchesGitLog) {
  Oid main = GitOid("main");
  for (std::string path : {"README.md", "a/b/c/deep.txt", "a", "données/été.txt",
                           "dir with space/file one.txt", "run.sh", "big.txt", ".gitattributes"}) {
    auto c = reader_.LastCommitTouching(*repo_, main, path);
    ASSERT_TRUE(c.has_value()) << path << ": " << c.error().message;
    ASSERT_TRUE(c->has_value()) << path;
    EXPECT_EQ((*c)->id.Hex(), Git("log -1 --format=%H main -- " + Quote(path))) << path;
  }
  auto feature = reader_.LastCommitTouching(*repo_, GitOid("feature/x"), "README.md");
  ASSERT_TRUE(feature.has_value() && feature->has_value());
  EXPECT_EQ((*feature)->summary, "Feature work");
  auto root = reader_.LastCommitTouching(*repo_, main, "");
  ASSERT_TRUE(root.has_value() && root->has_value());
  EXPECT_EQ((*root)->id, main);
  // Pathspec magic is off: a glob does not match anything.
  auto glob = reader_.LastCommitTouching(*repo_, main, "*.md");
  ASSERT_TRUE(glob.has_value());
  EXPECT_FALSE(glob->has_value());
  auto dash = reader_.LastCommitTouching(*repo_, main, "-p");
  ASSERT_TRUE(dash.has_value());
  EXPECT_FALSE(dash->has_value());
}

TEST_F(RepoReaderTest, ConcurrentReadersAgree) {
  Oid main = GitOid("main");
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      RepoReader r;
      for (int i = 0; i < 200; ++i) {
        auto oid = r.ResolveRevision(*repo_, i % 2 ? "main" : "HEAD");
        auto e = r.Lookup(*repo_, main, "a/b/c/deep.txt");
        if (oid && *oid == main && e && e->size == 7) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 800);
}

TEST(RepoReaderCache, SeesNewRefsAndRecreatedRepos) {
  TempDir tmp;
  RepoReader reader;
  std::string repo = tmp.path() + "/r.git";
  Sh(tmp.path(),
     "git init -q --bare -b main r.git && git init -q -b main w && cd w && "
     "git commit -q --allow-empty -m one && git push -q ../r.git main");
  Oid first = reader.ResolveRevision(repo, "main").value();
  Sh(tmp.path(), "cd w && git commit -q --allow-empty -m two && git push -q ../r.git main");
  Oid second = reader.ResolveRevision(repo, "main").value();
  EXPECT_NE(first, second);
  EXPECT_EQ(second.Hex(), Sh(tmp.path(), "git -C r.git rev-parse main").substr(0, 40));
  // Delete and recreate under the same path: the cached handle must not be reused.
  Sh(tmp.path(),
     "rm -rf r.git && git init -q --bare -b main r.git && cd w && "
     "git checkout -q --orphan other && git commit -q --allow-empty -m three && "
     "git push -q ../r.git other:main");
  Oid third = reader.ResolveRevision(repo, "main").value();
  EXPECT_EQ(third.Hex(), Sh(tmp.path(), "git -C r.git rev-parse main").substr(0, 40));
  auto gone = reader.ResolveRevision(repo, second.Hex());
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::RevisionNotFound);
}

}  // namespace
}  // namespace hangar::git

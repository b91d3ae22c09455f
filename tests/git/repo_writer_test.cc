#include "git/repo_writer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "git/git2_util.h"
#include "git/repo_reader.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

namespace fs = std::filesystem;
using testing::Sh;
using testing::TempDir;

const Signature kAuthor{"Hangar Bot", "bot@hangar.local", 1700000000, 60};

std::vector<std::string> Children(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(InitBareRepo, CreatesAValidRepoWithInitialCommit) {
  TempDir tmp;
  std::string repo = tmp.path() + "/models/acme/bert.git";
  auto commit = InitBareRepo(repo,
                             {{".gitattributes", std::string(InitialGitattributes())},
                              {"README.md", "# bert\n"},
                              {"configs/base/config.json", "{}\n"},
                              {"configs/large.json", "{\"large\": true}\n"}},
                             kAuthor, "initial commit");
  ASSERT_TRUE(commit.has_value()) << commit.error().message;
  EXPECT_EQ(Sh(repo, "git rev-parse main"), commit->Hex() + "\n");
  EXPECT_EQ(Sh(repo, "git symbolic-ref HEAD"), "refs/heads/main\n");
  EXPECT_EQ(Sh(repo, "git log --format='%an|%ae|%at|%ai|%s' main"),
            "Hangar Bot|bot@hangar.local|1700000000|2023-11-14 23:13:20 +0100|initial commit\n");
  EXPECT_EQ(Sh(repo, "git ls-tree -r --name-only main"),
            ".gitattributes\nREADME.md\nconfigs/base/config.json\nconfigs/large.json\n");
  EXPECT_EQ(Sh(repo, "git show main:configs/large.json"), "{\"large\": true}\n");
  EXPECT_EQ(Sh(repo, "git fsck --strict --no-dangling 2>&1"), "");
  EXPECT_EQ(Sh(repo, "git rev-parse --is-bare-repository"), "true\n");
  EXPECT_EQ(Sh(repo,
               "git config uploadpack.allowFilter && git config receive.advertisePushOptions"
               " && git config core.commitGraph && git config gc.writeCommitGraph"),
            "true\ntrue\ntrue\ntrue\n");
  // Only the repository itself is left in the parent: no temporary directory.
  EXPECT_EQ(Children(tmp.path() + "/models/acme"), std::vector<std::string>{"bert.git"});

  RepoReader reader;
  auto head = reader.ResolveRevision(repo, "HEAD");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(*head, *commit);
  auto attrs = reader.Lookup(repo, *head, ".gitattributes");
  ASSERT_TRUE(attrs.has_value());
  EXPECT_EQ(reader.ReadBlob(repo, attrs->oid, 1 << 20).value(), InitialGitattributes());
}

TEST(InitBareRepo, PartialCloneWorksAgainstIt) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  ASSERT_TRUE(InitBareRepo(repo, {{"a/b.txt", "b\n"}, {"c.txt", "c\n"}}, kAuthor, "init"));
  // file:// runs upload-pack with the repo's own config, as the HTTP server will.
  Sh(tmp.path(), "git clone -q --filter=blob:none file://" + testing::Quote(repo) + " clone");
  EXPECT_EQ(Sh(tmp.path(), "cat clone/a/b.txt"), "b\n");
  EXPECT_EQ(Sh(tmp.path(), "git -C clone config remote.origin.partialclonefilter"), "blob:none\n");
}

TEST(InitBareRepo, RefusesExistingAndBadPaths) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  ASSERT_TRUE(InitBareRepo(repo, {{"x", "1"}}, kAuthor, "one").has_value());
  auto again = InitBareRepo(repo, {{"y", "2"}}, kAuthor, "two");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::Conflict);
  EXPECT_EQ(Sh(repo, "git log --format=%s main"), "one\n");

  for (std::string bad : {"../x", "a//b", "/abs", "dir/", ".git/config", "a/./b", "", ".GIT/config",
                          "GIT~1/config", "a\\b"}) {
    auto r = InitBareRepo(tmp.path() + "/bad.git", {{bad, "x"}}, kAuthor, "bad");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << bad;
  }
  auto clash = InitBareRepo(tmp.path() + "/bad.git", {{"a", "x"}, {"a/b", "y"}}, kAuthor, "bad");
  ASSERT_FALSE(clash.has_value());
  EXPECT_EQ(clash.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Children(tmp.path()), std::vector<std::string>{"r.git"});
}

TEST(InitialGitattributes, TracksTheUsualFormatsWithLfs) {
  std::string attrs(InitialGitattributes());
  for (std::string pattern :
       {"*.bin",     "*.safetensors", "*.onnx",  "*.pt",    "*.pth",         "*.ckpt",    "*.h5",
        "*.msgpack", "*.tflite",      "*.tar.*", "*.zip",   "*.gz",          "*.npy",     "*.npz",
        "*.pkl",     "*.parquet",     "*.arrow", "*.model", "*.traineddata", "*tfevents*"}) {
    EXPECT_NE(attrs.find("\n" + pattern + " filter=lfs diff=lfs merge=lfs -text\n"),
              std::string::npos)
        << pattern;
  }
  // git itself agrees that a weights file goes through LFS.
  TempDir tmp;
  Sh(tmp.path(), "git init -q w && printf '%s' " + testing::Quote(attrs) + " > w/.gitattributes");
  EXPECT_EQ(Sh(tmp.path() + "/w",
               "git check-attr filter -- model.safetensors logs/x.tfevents.1 README.md"),
            "model.safetensors: filter: lfs\nlogs/x.tfevents.1: filter: lfs\n"
            "README.md: filter: unspecified\n");
}

TEST(WriteCommitGraph, WritesBloomFilters) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  ASSERT_TRUE(InitBareRepo(repo, {{"x", "1"}}, kAuthor, "one").has_value());
  ASSERT_TRUE(WriteCommitGraph(repo).has_value());
  EXPECT_TRUE(fs::exists(repo + "/objects/info/commit-graph"));
  EXPECT_EQ(Sh(repo, "git commit-graph verify 2>&1 && echo ok"), "ok\n");
  auto missing = WriteCommitGraph(tmp.path() + "/nope.git");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
}

// A push's graph refresh beside a maintenance: the second writer waits for the first's
// lock instead of failing (the "concurrent maintenance exits 1" of maintenance.sh).
TEST(WriteCommitGraph, WaitsForAnotherWritersLock) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  ASSERT_TRUE(InitBareRepo(repo, {{"x", "1"}}, kAuthor, "one").has_value());
  const std::string lock = repo + "/objects/info/commit-graph.lock";
  fs::create_directories(repo + "/objects/info");
  { std::ofstream(lock) << "held"; }
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    fs::remove(lock);
  });
  auto written = WriteCommitGraph(repo);
  other.join();
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(Sh(repo, "git commit-graph verify 2>&1 && echo ok"), "ok\n");
  // A lock that stays past the timeout: Unavailable, not a hang.
  { std::ofstream(lock) << "held"; }
  auto stuck = WriteCommitGraph(repo, std::chrono::milliseconds(300));
  ASSERT_FALSE(stuck.has_value());
  EXPECT_EQ(stuck.error().code, ErrorCode::Unavailable);
}

// A pushed commit may carry a message of any size; what Hangar reads of it is bounded.
TEST(ReadCommit, ReadsAtMostTheShownPartOfAHugeMessage) {
  TempDir tmp;
  std::string repo = tmp.path() + "/r.git";
  Oid commit = InitBareRepo(repo, {{"x", "1"}}, kAuthor, std::string(1 << 20, 'm')).value();
  RepoReader reader;
  auto info = reader.ReadCommit(repo, commit);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->message.size(), internal::kMaxShownMessage);
  EXPECT_EQ(info->summary.size(), internal::kMaxShownMessage);
}

TEST(MoveRepo, RenamesAndRefusesToOverwrite) {
  TempDir tmp;
  std::string a = tmp.path() + "/a/one.git", b = tmp.path() + "/b/c/two.git";
  Oid commit = InitBareRepo(a, {{"x", "1"}}, kAuthor, "one").value();
  RepoReader reader;
  EXPECT_EQ(reader.ResolveRevision(a, "main").value(), commit);
  ASSERT_TRUE(MoveRepo(a, b).has_value());
  EXPECT_FALSE(fs::exists(a));
  EXPECT_EQ(reader.ResolveRevision(b, "main").value(), commit);
  auto old = reader.ResolveRevision(a, "main");
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().code, ErrorCode::RepoNotFound);

  ASSERT_TRUE(InitBareRepo(a, {{"y", "2"}}, kAuthor, "other").has_value());
  auto clash = MoveRepo(a, b);
  ASSERT_FALSE(clash.has_value());
  EXPECT_EQ(clash.error().code, ErrorCode::Conflict);
  EXPECT_EQ(reader.ResolveRevision(b, "main").value(), commit);
  auto missing = MoveRepo(tmp.path() + "/nope.git", tmp.path() + "/x.git");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
}

TEST(DeleteRepo, RemovesEverythingAndLeavesNoTrash) {
  TempDir tmp;
  std::string repo = tmp.path() + "/ns/r.git";
  ASSERT_TRUE(InitBareRepo(repo, {{"x", "1"}}, kAuthor, "one").has_value());
  ASSERT_TRUE(InitBareRepo(tmp.path() + "/ns/keep.git", {{"x", "1"}}, kAuthor, "one"));
  ASSERT_TRUE(DeleteRepo(repo).has_value());
  EXPECT_EQ(Children(tmp.path() + "/ns"), std::vector<std::string>{"keep.git"});
  auto again = DeleteRepo(repo);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace hangar::git

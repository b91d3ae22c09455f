// The repo path rules (core/repo_path.h; hf-api.md §1.5, issue #13 point 4).

#include "core/repo_path.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hangar {
namespace {

using namespace std::string_literals;

// `.git` as Windows, macOS and case-insensitive filesystems would open it.
const std::vector<std::string> kGitInDisguise = {".git",       ".GIT",
                                                 ".Git",       ".gIT",
                                                 ".git.",      ".git..",
                                                 ".git ",      ".git . ",
                                                 "GIT~1",      "git~1",
                                                 "Git~12",     ".git::$INDEX_ALLOCATION",
                                                 ".git:$DATA", ".GIT:stream:$DATA",
                                                 ".git\\x",    ".g\u200cit",
                                                 "\ufeff.git", ".gi\u200ft",
                                                 ".git\u206a", ".G\u202aIT. "};

TEST(IsGitDirName, SeesThroughEveryDisguise) {
  for (const auto& name : kGitInDisguise) EXPECT_TRUE(IsGitDirName(name)) << name;
}

TEST(IsGitDirName, LeavesNeighboursAlone) {
  for (std::string ok :
       {".gitattributes", ".gitignore", ".gitmodules", "git", ".git_x", "x.git", "a.git.", ".gitx",
        "git~", "git~0", "git~1a", "GIT~", "~1", ".g it", "..git", ".git-lfs", "gi\u200ct"}) {
    EXPECT_FALSE(IsGitDirName(ok)) << ok;
  }
}

TEST(ValidateRepoPath, RefusesGitInDisguiseAnywhereInThePath) {
  for (const auto& name : kGitInDisguise) {
    for (std::string path : {name, name + "/config", "a/" + name + "/x", "a/" + name}) {
      if (path.find('\\') != std::string::npos) continue;  // refused as a backslash below
      auto r = ValidateRepoPath(path);
      ASSERT_FALSE(r.has_value()) << path;
      EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
      EXPECT_TRUE(r.error().message.find("a '.git' component is not allowed") !=
                      std::string::npos ||
                  r.error().message.find("open it as the .git directory") != std::string::npos)
          << r.error().message;
      EXPECT_FALSE(ValidateReadPath(path).has_value()) << path;
    }
  }
}

TEST(ValidateRepoPath, RefusesTraversalAndHostileBytesSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "it is empty"},
      {"/etc/passwd", "absolute paths"},
      {"../x", "'..' components"},
      {"a/../b", "'..' components"},
      {"..", "'..' components"},
      {"a/./b", "'.' and '..'"},
      {"./a", "'.' and '..'"},
      {"a//b", "an empty component"},
      {"a/", "an empty component"},
      {"a\\b", "a backslash"},
      {"..\\x", "a backslash"},
      {"a\0b"s, "a NUL byte"},
      {"a\nb", "a control character"},
      {"a\x7f", "a control character"},
      {"a\tb", "a control character"},
      {std::string(4097, 'a'), "longer than 4096 bytes"},
  };
  for (const auto& [path, why] : cases) {
    auto r = ValidateRepoPath(path);
    ASSERT_FALSE(r.has_value()) << path;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
    // Control bytes never reach a message (it becomes an X-Error-Message header).
    for (char c : r.error().message) EXPECT_FALSE(c >= 0 && c < 0x20) << r.error().message;
  }
  EXPECT_EQ(ValidateRepoPath("a\nb").error().message,
            "invalid path 'a\\x0ab': it contains a control character");
}

TEST(ValidateRepoPath, AcceptsOrdinaryPaths) {
  for (std::string ok : {"config.json", "dir with space/caf\xc3\xa9.txt", ".gitattributes",
                         "a/.gitignore", "weights/model-00001-of-00002.safetensors", "x.git/y",
                         "git/config", "a:b", "...", "a.", "a "}) {
    EXPECT_TRUE(ValidateRepoPath(ok).has_value()) << ok;
  }
}

TEST(IsGitmodulesName, SeesTheSameDisguisesAsGit) {
  for (std::string name :
       {".gitmodules", ".GITMODULES", ".GitModules", ".gitmodules.", ".gitmodules ",
        ".gitmodules::$DATA", "GITMOD~1", "gitmod~4", "GI7EBA~1", ".git\u200cmodules"}) {
    EXPECT_TRUE(IsGitmodulesName(name)) << name;
  }
  for (std::string ok : {".gitmodule", "gitmodules", ".gitmodules2", "x.gitmodules", "GITMOD~0",
                         "GITMOD~", ".gitattributes"}) {
    EXPECT_FALSE(IsGitmodulesName(ok)) << ok;
  }
}

TEST(ValidateRepoPath, RefusesAFolderNamedGitmodulesButNotTheFile) {
  EXPECT_TRUE(ValidateRepoPath(".gitmodules").has_value());
  EXPECT_TRUE(ValidateRepoPath("sub/.gitmodules").has_value());
  for (std::string bad : {".gitmodules/x", "a/.GitModules/b", "GITMOD~1/x"}) {
    auto r = ValidateRepoPath(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find(".gitmodules"), std::string::npos) << r.error().message;
  }
}

TEST(ValidateReadPath, AllowsWhatGitMayHoldButNotTraversal) {
  EXPECT_TRUE(ValidateReadPath("a\\b").has_value());
  EXPECT_TRUE(ValidateReadPath("a\nb").has_value());
  for (std::string bad : std::vector<std::string>{"", "/a", "../a", "a//b", "a/./b", ".git/config",
                                                  ".GIT/config", "a\0b"s}) {
    EXPECT_FALSE(ValidateReadPath(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace hangar

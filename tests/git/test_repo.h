#pragma once
// Test helpers for tests/git: temporary directories, running shell scripts, and a fixture
// repository built with the real `git` binary.

#include <string>
#include <string_view>

namespace hangar::git::testing {

// A fresh directory under $TMPDIR, removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs `script` with /bin/sh -e in `dir`, with a clean git identity/config (HOME=dir,
// no system config). Returns stdout; sets *exit_code when given, else fails the current
// test on a non-zero exit.
std::string Sh(const std::string& dir, const std::string& script, int* exit_code = nullptr);

// Single-quotes `s` for sh.
std::string Quote(std::string_view s);

// Builds the fixture: <dir>/repo.git (bare mirror) with
//   5 commits on main (distinct dates), branch feature/x (1 more commit), annotated tag
//   v1.0, lightweight tag light, refs/pr/1 → feature/x, refs/convert/parquet,
//   nested dirs with spaces and non-ASCII names, an LFS pointer model.safetensors,
//   an executable, a symlink, and a commit-graph with Bloom filters.
// Returns the bare repository's path.
std::string BuildFixtureRepo(const std::string& dir);

// The LFS pointer text committed as model.safetensors in the fixture.
std::string FixturePointerText();

}  // namespace hangar::git::testing

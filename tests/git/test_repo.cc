#include "test_repo.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace hangar::git::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/hangar-git-test-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) std::abort();
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string Sh(const std::string& dir, const std::string& script, int* exit_code) {
  std::string full = "cd " + Quote(dir) + " && export HOME=" + Quote(dir) +
                     " GIT_CONFIG_NOSYSTEM=1 LC_ALL=C"
                     " GIT_AUTHOR_NAME='Alice Author' GIT_AUTHOR_EMAIL=alice@example.com"
                     " GIT_COMMITTER_NAME='Bob Committer' GIT_COMMITTER_EMAIL=bob@example.com"
                     " && unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE && set -e\n" +
                     script;
  std::string cmd = "/bin/sh -c " + Quote(full);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed";
    return {};
  }
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (exit_code) {
    *exit_code = code;
  } else {
    EXPECT_EQ(code, 0) << "script failed:\n" << script;
  }
  return out;
}

std::string FixturePointerText() {
  return "version https://git-lfs.github.com/spec/v1\n"
         "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
         "size 12345\n";
}

std::string BuildFixtureRepo(const std::string& dir) {
  std::string script = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }

printf '# Model\n' > README.md
printf '*.safetensors filter=lfs diff=lfs merge=lfs -text\n' > .gitattributes
git add -A && commit 1700000000 -m 'Initial commit'

mkdir -p 'dir with space' 'données' a/b/c
printf 'one\n' > 'dir with space/file one.txt'
printf 'summer\n' > 'données/été.txt'
printf 'deep\n' > a/b/c/deep.txt
printf 'dot\n' > a.b
printf '%s' "$POINTER" > model.safetensors
git add -A && commit 1700000100 -m 'Add files' -m 'A longer body line.'
git tag light

git checkout -q -b feature/x
printf '# Model (feature)\n' > README.md
git add -A && commit 1700000200 -m 'Feature work'
git checkout -q main

printf 'deeper\n' > a/b/c/deep.txt
git add -A && commit 1700000300 -m 'Update deep'
GIT_COMMITTER_DATE='@1700000300 +0000' git tag -a v1.0 -m 'Release 1.0'

printf '#!/bin/sh\necho hi\n' > run.sh && chmod +x run.sh
ln -s README.md link.md
git add -A && commit 1700000400 -m 'Add script and link'

printf 'big\n%.0s' $(seq 1 2000) > big.txt
git add -A && commit 1700000500 -m 'Add big file'

git update-ref refs/pr/1 feature/x
git update-ref refs/convert/parquet main~1
cd ..
git clone -q --mirror work repo.git
git -C repo.git commit-graph write --reachable --changed-paths
)SH";
  Sh(dir, "export POINTER=" + Quote(FixturePointerText()) + "\n" + script);
  return dir + "/repo.git";
}

}  // namespace hangar::git::testing

// Manual measurement, disabled by default (STYLE.md §7: no timed unit tests). Run with
//   build-git/tests/git/git_test --gtest_also_run_disabled_tests --gtest_filter='*Speed*'
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "git/command.h"
#include "git/repo_reader.h"
#include "test_repo.h"

namespace hangar::git {
namespace {

TEST(ListTreeSpeed, DISABLED_HundredThousandFiles) {
  testing::TempDir tmp;
  // HANGAR_SPEED_REPO=<dir>: build the repository there once and reuse it on later runs.
  const char* keep = std::getenv("HANGAR_SPEED_REPO");
  std::string repo = keep ? keep : tmp.path() + "/big.git";
  bool reuse = keep && std::filesystem::exists(repo + "/HEAD");
  if (!reuse) testing::Sh(tmp.path(), "git init -q --bare -b main " + testing::Quote(repo));
  // 1,000 directories of 100 files each, plus their trees: 101,000 entries, one commit.
  std::string stream =
      "commit refs/heads/main\ncommitter A <a@b> 1700000000 +0000\n"
      "data 5\nlarge\n";
  char line[160];
  for (int d = 0; d < 1000; ++d) {
    for (int f = 0; f < 100; ++f) {
      std::string content = "file " + std::to_string(d) + "/" + std::to_string(f) + "\n";
      std::snprintf(line, sizeof line, "M 100644 inline dir%03d/file%03d.txt\ndata %zu\n", d, f,
                    content.size());
      stream += line;
      stream += content;
    }
  }
  stream += "\n";
  if (!reuse) {
    auto out = Command("fast-import")
                   .Arg("--quiet")
                   .Env("GIT_DIR", repo)
                   .Timeout(std::chrono::minutes(5))
                   .Run(stream);
    ASSERT_TRUE(out.has_value() && out->ok()) << (out ? out->stderr_data : out.error().message);
  }

  RepoReader reader;
  Oid head = reader.ResolveRevision(repo, "main").value();
  for (int round = 0; round < 3; ++round) {
    timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    auto start = std::chrono::steady_clock::now();
    auto entries = reader.ListTree(repo, head, "", true);
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    double cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
    ASSERT_TRUE(entries.has_value());
    EXPECT_EQ(entries->size(), 101000u);
    EXPECT_EQ(entries->back().size, std::string("file 999/99\n").size());
    std::printf("ListTree(recursive) of %zu entries: %.1f ms wall, %.1f ms CPU\n", entries->size(),
                ms.count(), cpu_ms);
  }
}

}  // namespace
}  // namespace hangar::git

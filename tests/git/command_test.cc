#include "git/command.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Sh;
using testing::TempDir;

// Blocks until process `pid` (not our child) has exited, via a pidfd; false when it is
// still alive after 20 s (a generous bound, not a synchronisation sleep).
bool WaitForExit(pid_t pid) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // already gone
  pollfd p{fd, POLLIN, 0};
  int r = ::poll(&p, 1, 20'000);
  ::close(fd);
  return r == 1;
}

std::string ReadLine(Process& p) {
  std::string line;
  char c;
  while (true) {
    auto n = p.ReadStdout({&c, 1});
    if (!n || *n == 0 || c == '\n') break;
    line += c;
  }
  return line;
}

TEST(Command, CollectsStdoutAndExitCode) {
  auto out = Command("version").Run();
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->stdout_data.rfind("git version ", 0), 0u) << out->stdout_data;
}

TEST(Command, NonZeroExitIsReportedWithStderr) {
  auto out = Command("frobnicate").Run();
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_NE(out->exit_code, 0);
  EXPECT_FALSE(out->ok());
  EXPECT_NE(out->stderr_data.find("frobnicate"), std::string::npos) << out->stderr_data;
}

TEST(Command, StdinIsPassed) {
  auto out = Command("hash-object").Arg("--stdin").Run("hello\n");
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->stdout_data, "ce013625030ba8dba906f756967f9e9ca394464a\n");
}

TEST(Command, EnvironmentIsCleanAndExtendable) {
  TempDir tmp;
  Sh(tmp.path(), "git init -q --bare r.git");
  ::setenv("GIT_DIR", "/nonexistent/inherited", 1);
  ::setenv("LANG", "de_DE.UTF-8", 1);
  auto out = Command("rev-parse").Arg("--absolute-git-dir").Dir(tmp.path() + "/r.git").Run();
  auto ident = Command("var")
                   .Arg("GIT_AUTHOR_IDENT")
                   .Env("GIT_AUTHOR_NAME", "Zed Zed")
                   .Env("GIT_AUTHOR_EMAIL", "z@example.com")
                   .Run();
  auto locale = Command("-c").Arg("alias.env=!env").Arg("env").Run();
  ::unsetenv("GIT_DIR");
  ::unsetenv("LANG");
  ASSERT_TRUE(out.has_value() && ident.has_value() && locale.has_value());
  EXPECT_EQ(out->stdout_data, tmp.path() + "/r.git\n");
  EXPECT_EQ(ident->stdout_data.rfind("Zed Zed <z@example.com>", 0), 0u) << ident->stdout_data;
  EXPECT_NE(locale->stdout_data.find("LC_ALL=C\n"), std::string::npos);
  EXPECT_NE(locale->stdout_data.find("GIT_TERMINAL_PROMPT=0\n"), std::string::npos);
  EXPECT_EQ(locale->stdout_data.find("LANG="), std::string::npos);
}

TEST(Command, UserArgRefusesOptions) {
  for (std::string_view bad : std::vector<std::string_view>{"-n", "--upload-pack=touch /tmp/x", "",
                                                            std::string_view("a\0b", 3)}) {
    auto out = Command("log").UserArg(bad).Run();
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code, ErrorCode::BadRequest);
  }
  auto started = Command("log").UserArg("-p").Start();
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::BadRequest);
  // A path may start with '-' only after "--".
  auto no_dashes = Command("log").PathArg("-weird").Run();
  ASSERT_FALSE(no_dashes.has_value());
  EXPECT_EQ(no_dashes.error().code, ErrorCode::BadRequest);
  auto ok = Command("rev-parse").Arg("--sq-quote").UserArg("main").Run();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->stdout_data, " 'main'\n");
}

TEST(Command, EndOfOptionsMakesUserDataPositional) {
  Command cmd("rev-parse");
  cmd.Arg("--sq-quote").EndOfOptions().UserArg("x").Dashes().PathArg("-p");
  EXPECT_EQ(cmd.ToString(), "git rev-parse --sq-quote --end-of-options x -- -p");
  auto out = cmd.Run();
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->exit_code, 0);
}

TEST(Command, RunTimeoutKillsAndReports) {
  auto out = Command("-c")
                 .Arg("alias.nap=!sleep 300")
                 .Arg("nap")
                 .Timeout(std::chrono::milliseconds(300))
                 .Run();
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code, ErrorCode::Unavailable);
  EXPECT_NE(out.error().message.find("timed out"), std::string::npos);
}

TEST(Command, TimeoutKillsTheWholeProcessGroup) {
  // The alias's shell starts a grandchild and reports its pid; the timeout must kill it.
  auto p = Command("-c")
               .Arg("alias.nap=!sleep 300 & echo $!; wait")
               .Arg("nap")
               .Timeout(std::chrono::milliseconds(1000))
               .Start();
  ASSERT_TRUE(p.has_value()) << p.error().message;
  pid_t grandchild = std::atoi(ReadLine(**p).c_str());
  ASSERT_GT(grandchild, 0);
  char buf[64];
  auto eof = (*p)->ReadStdout(buf);  // ends when the group is killed
  EXPECT_FALSE(eof.has_value());
  auto code = (*p)->Wait();
  ASSERT_FALSE(code.has_value());
  EXPECT_EQ(code.error().code, ErrorCode::Unavailable);
  EXPECT_TRUE(WaitForExit(grandchild));
}

TEST(Command, DestroyingAProcessKillsItsGroup) {
  pid_t grandchild = 0, child = 0;
  {
    auto p = Command("-c").Arg("alias.nap=!sleep 300 & echo $!; wait").Arg("nap").Start();
    ASSERT_TRUE(p.has_value()) << p.error().message;
    child = (*p)->pid();
    grandchild = std::atoi(ReadLine(**p).c_str());
    ASSERT_GT(grandchild, 0);
  }
  EXPECT_TRUE(WaitForExit(grandchild));
  EXPECT_NE(::kill(child, 0), 0);  // reaped: no zombie left behind
}

TEST(Command, MaxOutputIsEnforced) {
  auto out = Command("-c").Arg("alias.spew=!yes").Arg("spew").MaxOutput(1 << 16).Run();
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().code, ErrorCode::PayloadTooLarge);
}

TEST(Command, WriteToExitedChildIsAnErrorNotSigpipe) {
  auto p = Command("version").Start();
  ASSERT_TRUE(p.has_value());
  std::string data(1 << 20, 'x');  // more than a pipe holds: blocks until the child exits
  auto w = (*p)->WriteStdin(data);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, ErrorCode::Internal);
  auto code = (*p)->Wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
}

TEST(Command, ConcurrentStdinAndStdoutDoNotDeadlock) {
  TempDir tmp;
  std::string content(4096, 'z');
  Sh(tmp.path(), "git init -q --bare r.git");
  auto hash = Command("hash-object")
                  .Arg("-w")
                  .Arg("--stdin")
                  .Env("GIT_DIR", tmp.path() + "/r.git")
                  .Run(content);
  ASSERT_TRUE(hash.has_value() && hash->ok());
  std::string oid = hash->stdout_data.substr(0, 40);

  // ~10 MB of requests, each "<oid> <padding>" (the padding is echoed back as %(rest));
  // ~20 MB of answers come back while we are still writing, so neither side may wait for
  // the other to finish.
  const std::string request = oid + " " + std::string(4000, 'p') + "\n";
  const size_t kRequests = 10 * 1024 * 1024 / request.size();
  auto p = Command("cat-file")
               .Arg("--batch=%(objectname) %(objectsize) %(rest)")
               .Env("GIT_DIR", tmp.path() + "/r.git")
               .Start();
  ASSERT_TRUE(p.has_value()) << p.error().message;
  Process& proc = **p;
  Result<void> write_result;
  std::thread writer([&] {
    for (size_t i = 0; i < kRequests && write_result; ++i) write_result = proc.WriteStdin(request);
    proc.CloseStdin();
  });
  size_t total = 0;
  std::string head;
  Result<size_t> n = size_t{0};
  char buf[65536];
  while ((n = proc.ReadStdout(buf)) && *n > 0) {
    if (head.size() < 100) head.append(buf, std::min<size_t>(*n, 100));
    total += *n;
  }
  if (!n) proc.Kill();
  writer.join();
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_TRUE(write_result.has_value());
  auto code = proc.Wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  std::string header = oid + " 4096 " + std::string(4000, 'p') + "\n";
  EXPECT_EQ(head.substr(0, 60), header.substr(0, 60));
  EXPECT_EQ(total, kRequests * (header.size() + content.size() + 1));
}

TEST(ProcessSource, StreamsOutputAndReportsFailure) {
  auto p = Command("hash-object").Arg("--stdin").Start();
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE((*p)->WriteStdin(std::string_view("hello\n")).has_value());
  (*p)->CloseStdin();
  ProcessSource src(std::move(*p));
  auto all = ReadAll(src, 1024);
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(*all, "ce013625030ba8dba906f756967f9e9ca394464a\n");

  auto bad =
      Command("cat-file").Arg("blob").Arg("0000000000000000000000000000000000000000").Start();
  ASSERT_TRUE(bad.has_value());
  ProcessSource bad_src(std::move(*bad));
  auto r = ReadAll(bad_src, 1024);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Internal);
  EXPECT_NE(r.error().message.find("status"), std::string::npos);
}

}  // namespace
}  // namespace hangar::git

// The parsers and framing of git over SSH and git:// (issue 18): api/git/ssh_command.h,
// api/git/git_daemon.h, api/git/serv_protocol.h.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "api/git/git_daemon.h"
#include "api/git/git_pump.h"
#include "api/git/serv_protocol.h"
#include "api/git/ssh_command.h"
#include "git/test_repo.h"

namespace hangar::api {
namespace {

TEST(ParseSshCommand, GitVerbsAndPathForms) {
  struct Case {
    const char* command;
    SshVerb verb;
    RepoType type;
    const char* id;
  };
  const Case cases[] = {
      {"git-upload-pack 'alice/m.git'", SshVerb::UploadPack, RepoType::Model, "alice/m"},
      {"git-upload-pack '/alice/m.git'", SshVerb::UploadPack, RepoType::Model, "alice/m"},
      {"git-receive-pack 'datasets/alice/d'", SshVerb::ReceivePack, RepoType::Dataset, "alice/d"},
      {"git upload-pack '/spaces/alice/s.git/'", SshVerb::UploadPack, RepoType::Space, "alice/s"},
      {"git-upload-pack models/alice/m", SshVerb::UploadPack, RepoType::Model, "alice/m"},
      // git's quoting of a quote inside the path: 'it'\''s' is it's — refused by RepoId.
  };
  for (const auto& c : cases) {
    auto r = ParseSshCommand(c.command);
    ASSERT_TRUE(r) << c.command << ": " << r.error().message;
    EXPECT_EQ(r->verb, c.verb) << c.command;
    EXPECT_EQ(r->repo.type, c.type) << c.command;
    EXPECT_EQ(r->repo.Id(), c.id) << c.command;
    EXPECT_TRUE(r->operation.empty());
  }
}

TEST(ParseSshCommand, LfsCommandsTakeAnOperation) {
  auto r = ParseSshCommand("git-lfs-authenticate alice/m.git download");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, SshVerb::LfsAuthenticate);
  EXPECT_EQ(r->operation, "download");
  r = ParseSshCommand("git-lfs-transfer '/alice/m.git' upload");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, SshVerb::LfsTransfer);
  EXPECT_EQ(r->operation, "upload");
  auto bad = ParseSshCommand("git-lfs-authenticate alice/m.git delete");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("operation must be"), std::string::npos);
  EXPECT_FALSE(ParseSshCommand("git-lfs-authenticate alice/m.git"));
}

TEST(ParseSshCommand, RefusesWhatIsNotAPlainGitCommand) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "no command"},
      {"rm -rf /", "unknown command 'rm'"},
      {"git-upload-archive 'alice/m.git'", "unknown command"},
      {"git-upload-pack '../../etc/passwd'", "not a repository path"},
      {"git-upload-pack 'alice/..'", "not a repository path"},
      {"git-upload-pack 'alice/m.git", "malformed quoting"},
      {"git-upload-pack 'alice/'x'm'", "malformed quoting"},
      {"git-upload-pack alice/m.git;id", "malformed command"},
      {"git-upload-pack $(id)/m", "malformed command"},
      {"git-upload-pack 'a/b' 'c/d'", "takes a repository path"},
      {"git-upload-pack 'other/alice/m'", "not a repository path"},
      {"git-upload-pack 'a\\'\\'b/m'", "malformed quoting"},
  };
  for (const auto& [command, message] : cases) {
    auto r = ParseSshCommand(command);
    ASSERT_FALSE(r) << command;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << command;
    EXPECT_NE(r.error().message.find(message), std::string::npos)
        << command << " -> " << r.error().message;
  }
  // git's escapes for a quote and '!' inside a quoted run are understood, then the name
  // is judged by RepoId's rules.
  auto quoted = ParseSshCommand("git-upload-pack 'alice/it'\\''s'");
  ASSERT_FALSE(quoted);
  EXPECT_NE(quoted.error().message.find("alice/it's"), std::string::npos) << quoted.error().message;
  EXPECT_FALSE(ParseSshCommand(std::string(5000, 'a')));
}

TEST(ParseGitDaemonRequest, ServicePathHostAndExtraParameters) {
  using namespace std::string_literals;
  auto r = ParseGitDaemonRequest("git-upload-pack /alice/m.git\0host=h:9418\0\0version=2\0"s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->service, "git-upload-pack");
  EXPECT_EQ(r->path, "/alice/m.git");
  EXPECT_EQ(r->git_protocol, "version=2");
  r = ParseGitDaemonRequest("git-upload-pack /a/b\0"s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->git_protocol, "");
  r = ParseGitDaemonRequest("git-upload-pack /a/b\0host=x\0\0version=2\0object-format=sha1\0"s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->git_protocol, "version=2:object-format=sha1");
  for (std::string bad : {"git-upload-pack"s, "git-upload-pack /a/b"s, "git-upload-pack \0"s,
                          "x\0 y"s, "git-upload-pack /a/b\0host=x"s}) {
    EXPECT_FALSE(ParseGitDaemonRequest(bad)) << bad;
  }
}

class ServFrames : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST_F(ServFrames, RoundTripAndLargePayloadsSplit) {
  std::string big(kMaxFramePayload + 10, 'x');
  std::thread writer([&] {
    ASSERT_TRUE(WriteServFrame(fds_[0], ServFrame::Hello, R"({"op":"keys"})"));
    ASSERT_TRUE(WriteServFrame(fds_[0], ServFrame::Stdout, big));
    ASSERT_TRUE(WriteServExit(fds_[0], 128));
    ::close(std::exchange(fds_[0], -1));
  });
  auto m = ReadServFrame(fds_[1]);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, ServFrame::Hello);
  EXPECT_EQ(m->payload, R"({"op":"keys"})");
  std::string got;
  for (int i = 0; i < 2; ++i) {
    m = ReadServFrame(fds_[1]);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, ServFrame::Stdout);
    got += m->payload;
  }
  EXPECT_EQ(got, big);
  m = ReadServFrame(fds_[1]);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->type, ServFrame::Exit);
  EXPECT_EQ(ServExitStatus(m->payload).value(), 128);
  writer.join();
  auto end = ReadServFrame(fds_[1]);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code, ErrorCode::NotFound);  // closed at a frame boundary
}

TEST_F(ServFrames, MalformedFramesAreRefused) {
  // Unknown type.
  ASSERT_EQ(::write(fds_[0], "Z\0\0\0\0", 5), 5);
  auto m = ReadServFrame(fds_[1]);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::BadRequest);
  // Over the size limit.
  ASSERT_EQ(::write(fds_[0], "O\x7f\0\0\0", 5), 5);
  m = ReadServFrame(fds_[1]);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::BadRequest);
  // Cut short.
  ASSERT_EQ(::write(fds_[0],
                    "O\0\0\0\x09"
                    "abc",
                    8),
            8);
  ::close(std::exchange(fds_[0], -1));
  m = ReadServFrame(fds_[1]);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::BadRequest);
  EXPECT_FALSE(ServExitStatus("abc"));
}

// A client that reads the ref advertisement and then says nothing: ReadIn blocks until the
// pump stops or aborts it.
class SilentClient final : public GitTransport {
 public:
  Result<size_t> ReadIn(std::span<char>) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopped_; });
    return MakeError(ErrorCode::BadRequest, "connection closed");
  }
  Result<void> WriteOut(std::string_view data) override {
    std::lock_guard lock(mu_);
    out_ += data;
    return {};
  }
  void StopReading() override { Stop(); }
  void Abort() override {
    aborted_ = true;
    Stop();
  }
  std::string out() {
    std::lock_guard lock(mu_);
    return out_;
  }
  bool aborted() const { return aborted_; }

 private:
  void Stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::atomic<bool> aborted_{false};
  std::string out_;
};

// Protocol v2's upload-pack waits for a command forever (its --timeout is v0's): the pump's
// idle deadline ends such a session and frees its slot (issue 18, a git:// client that
// held the anonymous budget).
TEST(PumpGit, AQuietClientIsCutOffAfterTheIdleTimeout) {
  git::testing::TempDir dir;
  git::testing::Sh(dir.path(),
                   "git init -q --bare -b main repo.git\n"
                   "git init -q -b main work && cd work && echo hi > a.txt && git add a.txt\n"
                   "git commit -q -m first && git push -q ../repo.git main\n");
  services::GitRepoAccess access;
  access.open = [&](const Principal&, const RepoId&, Access) -> Result<services::RepoHandle> {
    services::RepoHandle h;
    h.git_path = dir.path() + "/repo.git";
    return h;
  };
  access.after_push = [](const services::RepoHandle&) {};
  services::GitLimits limits;
  limits.pack_concurrency = 1;
  limits.pack_per_principal = 1;
  limits.push_concurrency = 1;
  services::GitService git(std::move(access), limits);
  auto conn = git.Connect(Principal::Anonymous(), RepoId{RepoType::Model, "a", "b"},
                          services::GitRpc::UploadPack, "version=2", "anon:127.0.0.1");
  ASSERT_TRUE(conn) << conn.error().message;
  EXPECT_EQ(git.admission().Snapshot().fetches, 1);
  SilentClient client;
  const auto start = std::chrono::steady_clock::now();
  auto status = PumpGit(**conn, client, std::chrono::milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_NE(*status, 0);  // killed
  EXPECT_TRUE(client.aborted());
  EXPECT_NE(client.out().find("version 2"), std::string::npos) << "the advertisement went out";
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(git.admission().Snapshot().fetches, 0) << "the slot is free again";
}

}  // namespace
}  // namespace hangar::api

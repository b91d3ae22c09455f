#include "services/git/git_service.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "git/pkt_line.h"
#include "git/test_repo.h"

namespace hangar::services {
namespace {

using git::testing::Sh;
using git::testing::TempDir;
using namespace std::chrono_literals;

// Counts on_queued calls and lets a test wait (without sleeping) until `n` callers queue.
class QueueWatch {
 public:
  std::function<void(int)> Hook() {
    return [this](int) {
      std::lock_guard lock(mu_);
      ++entered_;
      cv_.notify_all();
    };
  }
  // True when `n` callers have queued in all; fails after a generous safety deadline.
  bool WaitEntered(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return entered_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
};

GitLimits Limits(int pack, int per_principal, int queue, std::chrono::milliseconds wait,
                 int push = 2) {
  GitLimits l;
  l.pack_concurrency = pack;
  l.pack_per_principal = per_principal;
  l.pack_queue = queue;
  l.pack_queue_wait = wait;
  l.push_concurrency = push;
  return l;
}

TEST(GitAdmission, GlobalBoundQueuesUntilASlotIsReleased) {
  QueueWatch watch;
  GitAdmission adm(Limits(2, 2, 8, 20s), watch.Hook());
  auto a = adm.Acquire(GitRpc::UploadPack, "user:1");
  auto b = adm.Acquire(GitRpc::UploadPack, "user:2");
  ASSERT_TRUE(a && b);
  auto c =
      std::async(std::launch::async, [&] { return adm.Acquire(GitRpc::UploadPack, "user:3"); });
  ASSERT_TRUE(watch.WaitEntered(1));
  EXPECT_EQ(adm.Snapshot().fetches, 2);
  EXPECT_EQ(adm.Snapshot().queued, 1);
  a->Release();
  auto got = c.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(adm.Snapshot().fetches, 2);
  EXPECT_EQ(adm.Snapshot().queued, 0);
}

TEST(GitAdmission, PerPrincipalBoundDoesNotHoldUpOthers) {
  QueueWatch watch;
  GitAdmission adm(Limits(3, 1, 8, 20s), watch.Hook());
  auto first = adm.Acquire(GitRpc::UploadPack, "anon:10.0.0.1");
  ASSERT_TRUE(first);
  auto second = std::async(std::launch::async,
                           [&] { return adm.Acquire(GitRpc::UploadPack, "anon:10.0.0.1"); });
  ASSERT_TRUE(watch.WaitEntered(1));
  // Queued behind the capped principal, another one still gets a free slot at once.
  auto other = adm.Acquire(GitRpc::UploadPack, "user:7");
  ASSERT_TRUE(other);
  EXPECT_EQ(adm.Snapshot().queued, 1);
  first->Release();
  auto admitted = second.get();
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(adm.Snapshot().fetches, 2);
}

TEST(GitAdmission, FullQueueIsUnavailableAtOnce) {
  QueueWatch watch;
  GitAdmission adm(Limits(1, 1, 1, 20s), watch.Hook());
  auto held = adm.Acquire(GitRpc::UploadPack, "user:1");
  ASSERT_TRUE(held);
  auto waiting =
      std::async(std::launch::async, [&] { return adm.Acquire(GitRpc::UploadPack, "user:2"); });
  ASSERT_TRUE(watch.WaitEntered(1));
  // The queue (1) is full: refused without waiting for the 20 s deadline.
  auto refused = adm.Acquire(GitRpc::UploadPack, "user:3");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::Unavailable);
  EXPECT_EQ(refused.error().message, "too many git operations in progress; retry later");
  held->Release();
  EXPECT_TRUE(waiting.get().has_value());
}

TEST(GitAdmission, WaitPastTheDeadlineIsUnavailable) {
  GitAdmission adm(Limits(1, 1, 4, 50ms));
  auto held = adm.Acquire(GitRpc::UploadPack, "user:1");
  ASSERT_TRUE(held);
  auto late = adm.Acquire(GitRpc::UploadPack, "user:2");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::Unavailable);
  EXPECT_EQ(adm.Snapshot().queued, 0);  // the timed-out waiter left the queue
}

TEST(GitAdmission, PushesHaveTheirOwnBoundPerPrincipal) {
  GitAdmission adm(Limits(1, 1, 4, 50ms, /*push=*/1));
  auto fetch = adm.Acquire(GitRpc::UploadPack, "user:1");
  auto push = adm.Acquire(GitRpc::ReceivePack, "user:1");
  ASSERT_TRUE(fetch && push) << "a push proceeds while clones saturate their budget";
  // Another principal pushes at once; the same one waits for its own push to end.
  auto other = adm.Acquire(GitRpc::ReceivePack, "deploy:7");
  ASSERT_TRUE(other);
  auto second_push = adm.Acquire(GitRpc::ReceivePack, "user:1");
  ASSERT_FALSE(second_push);
  EXPECT_EQ(second_push.error().code, ErrorCode::Unavailable);
  push->Release();
  EXPECT_TRUE(adm.Acquire(GitRpc::ReceivePack, "user:1").has_value());
}

TEST(GitAdmission, AnonymousClientsLeaveOneSlotToSignedInUsers) {
  QueueWatch watch;
  GitAdmission adm(Limits(3, 2, 8, 20s), watch.Hook());
  auto a = adm.Acquire(GitRpc::UploadPack, "anon:10.0.0.1");
  auto b = adm.Acquire(GitRpc::UploadPack, "anon:10.0.0.2");
  ASSERT_TRUE(a && b);
  // A third anonymous client waits although a slot is free: it is the users'.
  auto c = std::async(std::launch::async,
                      [&] { return adm.Acquire(GitRpc::UploadPack, "anon:10.0.0.3"); });
  ASSERT_TRUE(watch.WaitEntered(1));
  auto user = adm.Acquire(GitRpc::UploadPack, "user:1");
  ASSERT_TRUE(user) << "the signed-in user takes the last slot past the waiting anonymous one";
  EXPECT_EQ(adm.Snapshot().queued, 1);
  a->Release();
  auto third = c.get();
  EXPECT_TRUE(third) << "the anonymous class has room again";
}

TEST(GitAdmission, AWaitingCallerIsToldWhereItStands) {
  QueueWatch watch;
  GitAdmission adm(Limits(1, 1, 8, 20s), watch.Hook());
  auto held = adm.Acquire(GitRpc::UploadPack, "user:1");
  ASSERT_TRUE(held);
  std::mutex mu;
  std::vector<int> told;
  auto waiter = std::async(std::launch::async, [&] {
    return adm.Acquire(GitRpc::UploadPack, "user:2", [&](int ahead) {
      std::lock_guard lock(mu);
      told.push_back(ahead);
    });
  });
  ASSERT_TRUE(watch.WaitEntered(1));
  held->Release();
  EXPECT_TRUE(waiter.get());
  std::lock_guard lock(mu);
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.front(), 0);  // first in the queue
}

TEST(GitAdmission, SlotsReleaseOnDestructionAndMove) {
  GitAdmission adm(Limits(1, 1, 0, 0ms));
  {
    auto a = adm.Acquire(GitRpc::UploadPack, "user:1");
    ASSERT_TRUE(a);
    GitSlot moved = std::move(*a);
    EXPECT_TRUE(moved);
    EXPECT_EQ(adm.Snapshot().fetches, 1);
  }
  EXPECT_EQ(adm.Snapshot().fetches, 0);
  EXPECT_TRUE(adm.Acquire(GitRpc::UploadPack, "user:1").has_value());
}

TEST(GitProtocolHeader, SanitizeAndVersion) {
  EXPECT_EQ(SanitizeGitProtocol("version=2"), "version=2");
  EXPECT_EQ(SanitizeGitProtocol("version=2:object-format=sha256"),
            "version=2:object-format=sha256");
  EXPECT_EQ(SanitizeGitProtocol("version=2\nX=1"), "");
  EXPECT_EQ(SanitizeGitProtocol("version=2 ; rm"), "");
  EXPECT_EQ(SanitizeGitProtocol(std::string(257, 'a')), "");
  EXPECT_EQ(GitProtocolVersion("version=2"), 2);
  EXPECT_EQ(GitProtocolVersion("version=1:version=2"), 2);
  EXPECT_EQ(GitProtocolVersion("foo=bar"), 0);
  EXPECT_EQ(GitProtocolVersion(""), 0);
  EXPECT_EQ(GitProtocolVersion("version=x"), 0);
}

TEST(GitRpcName, ParsesOnlyTheTwoServices) {
  EXPECT_EQ(*ParseGitRpc("git-upload-pack"), GitRpc::UploadPack);
  EXPECT_EQ(*ParseGitRpc("git-receive-pack"), GitRpc::ReceivePack);
  auto bad = ParseGitRpc("git-foo");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(bad.error().message, "unsupported service 'git-foo'");
}

// ---------------------------------------------------------------------------------------
// GitService against a real bare repository, with a fake repo lookup.

// A request body that yields nothing until Close(); then Read fails (a dropped client).
class BlockingBody final : public ByteSource {
 public:
  explicit BlockingBody(std::promise<void>* destroyed) : destroyed_(destroyed) {}
  ~BlockingBody() override { destroyed_->set_value(); }
  Result<size_t> Read(std::span<char>) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_; });
    return MakeError(ErrorCode::BadRequest, "request body cut short");
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  std::promise<void>* destroyed_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
};

class GitServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Sh(dir_.path(),
       "git init -q --bare -b main repo.git\n"
       "git init -q -b main work && cd work && echo hello > a.txt && git add a.txt\n"
       "git commit -q -m first && git push -q ../repo.git main\n");
    repo_path_ = dir_.path() + "/repo.git";
    handle_.git_path = repo_path_;
    handle_.record.ns = "acme";
    handle_.record.name = "bert";
    GitRepoAccess access;
    access.open = [this](const Principal& who, const RepoId&, Access needed) -> Result<RepoHandle> {
      last_needed_ = needed;
      if (open_error_) return *open_error_;
      return handle_;
    };
    access.after_push = [this](const RepoHandle&) { ++after_push_calls_; };
    GitLimits limits = Limits(3, 2, 32, std::chrono::seconds(60));
    limits.request_prebuffer = prebuffer_;
    service_ = std::make_unique<GitService>(std::move(access), limits);
  }

  static Principal User() {
    Principal p;
    p.anonymous = false;
    p.user_id = 7;
    p.name = "alice";
    p.role = TokenRole::Write;
    return p;
  }
  std::string Head() { return Sh(repo_path_, "git rev-parse refs/heads/main"); }
  static std::string Drain(ByteSource& src) {
    auto all = ReadAll(src, 64 << 20);
    EXPECT_TRUE(all.has_value()) << (all ? "" : all.error().message);
    return all ? *all : "";
  }
  Result<std::string> RunRpc(GitRpc rpc, std::string body, std::string protocol = "") {
    GitRpcRequest req;
    req.body = std::make_shared<StringSource>(std::move(body));
    req.git_protocol = std::move(protocol);
    req.client_address = "127.0.0.1";
    auto src = service_->Rpc(User(), RepoId{RepoType::Model, "acme", "bert"}, rpc, std::move(req));
    if (!src) return src.error();
    return ReadAll(**src, 64 << 20);
  }

  TempDir dir_;
  size_t prebuffer_ = 1 << 20;
  std::string repo_path_;
  RepoHandle handle_;
  std::optional<Error> open_error_;
  Access last_needed_ = Access::None;
  int after_push_calls_ = 0;
  std::unique_ptr<GitService> service_;
  const RepoId id_{RepoType::Model, "acme", "bert"};
};

TEST_F(GitServiceTest, InfoRefsV0HasServicePreambleAndRefs) {
  auto ad = service_->InfoRefs(Principal::Anonymous(), id_, GitRpc::UploadPack, "");
  ASSERT_TRUE(ad) << ad.error().message;
  EXPECT_EQ(ad->body.substr(0, 34), "001e# service=git-upload-pack\n0000");
  EXPECT_NE(ad->body.find(" refs/heads/main"), std::string::npos);
  EXPECT_EQ(ad->body.substr(ad->body.size() - 4), "0000");
  EXPECT_EQ(last_needed_, Access::Read);
}

TEST_F(GitServiceTest, InfoRefsV2IsACapabilityAdvertisementWithoutPreamble) {
  auto ad = service_->InfoRefs(Principal::Anonymous(), id_, GitRpc::UploadPack, "version=2");
  ASSERT_TRUE(ad) << ad.error().message;
  EXPECT_EQ(ad->body.substr(0, 14), "000eversion 2\n");
  EXPECT_NE(ad->body.find("fetch=shallow wait-for-done filter"), std::string::npos);
}

TEST_F(GitServiceTest, InfoRefsReceivePackNeedsWriteAndKeepsPreamble) {
  auto ad = service_->InfoRefs(User(), id_, GitRpc::ReceivePack, "version=2");
  ASSERT_TRUE(ad) << ad.error().message;
  EXPECT_EQ(last_needed_, Access::Write);
  EXPECT_EQ(ad->body.substr(0, 35), "001f# service=git-receive-pack\n0000");
  EXPECT_NE(ad->body.find("report-status"), std::string::npos);
}

TEST_F(GitServiceTest, AnonymousMissingOrPrivateRepoChallenges) {
  open_error_ = MakeError(ErrorCode::RepoNotFound, "repository not found");
  auto anon = service_->InfoRefs(Principal::Anonymous(), id_, GitRpc::UploadPack, "");
  ASSERT_FALSE(anon);
  EXPECT_EQ(anon.error().code, ErrorCode::Unauthorized);
  auto user = service_->InfoRefs(User(), id_, GitRpc::UploadPack, "");
  ASSERT_FALSE(user);
  EXPECT_EQ(user.error().code, ErrorCode::RepoNotFound);
  open_error_ = MakeError(ErrorCode::Forbidden, "no write access");
  auto push = service_->InfoRefs(User(), id_, GitRpc::ReceivePack, "");
  ASSERT_FALSE(push);
  EXPECT_EQ(push.error().code, ErrorCode::Forbidden);
}

TEST_F(GitServiceTest, UploadPackV2LsRefs) {
  std::string req = git::PktLine("command=ls-refs\n") + git::PktLine("object-format=sha1\n") +
                    std::string(git::PktDelim()) + git::PktLine("symrefs\n") +
                    std::string(git::PktFlush());
  auto out = RunRpc(GitRpc::UploadPack, req, "version=2");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("HEAD symref-target:refs/heads/main"), std::string::npos) << *out;
  EXPECT_NE(out->find(Head().substr(0, 40) + " refs/heads/main"), std::string::npos);
}

TEST_F(GitServiceTest, ReceivePackPushUpdatesTheRefAndCallsAfterPush) {
  std::string old_head = Head().substr(0, 40);
  std::string pack_file = dir_.path() + "/push.pack";
  std::string new_head =
      Sh(dir_.path() + "/work",
         "echo more > b.txt && git add b.txt && git commit -q -m second\n"
         "git rev-parse HEAD\n"
         "printf '%s\\n^%s\\n' $(git rev-parse HEAD) " +
             old_head + " | git pack-objects --revs --stdout -q > ../push.pack\n")
          .substr(0, 40);
  std::string pack = Sh(dir_.path(), "cat push.pack");
  std::string req = git::PktLine(old_head + " " + new_head + " refs/heads/main" +
                                 std::string(1, '\0') + "report-status\n") +
                    std::string(git::PktFlush()) + pack;
  auto out = RunRpc(GitRpc::ReceivePack, req);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("unpack ok"), std::string::npos) << *out;
  EXPECT_NE(out->find("ok refs/heads/main"), std::string::npos) << *out;
  EXPECT_EQ(Head().substr(0, 40), new_head);
  EXPECT_EQ(after_push_calls_, 1);
}

TEST_F(GitServiceTest, PushesToRefsConvertAreRefused) {
  std::string head = Head().substr(0, 40);
  std::string req = git::PktLine(std::string(40, '0') + " " + head + " refs/convert/parquet" +
                                 std::string(1, '\0') + "report-status\n") +
                    std::string(git::PktFlush());
  auto out = RunRpc(GitRpc::ReceivePack, req);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("ng refs/convert/parquet"), std::string::npos) << *out;
  int code = 0;
  Sh(repo_path_, "git rev-parse --verify -q refs/convert/parquet", &code);
  EXPECT_NE(code, 0);
}

TEST_F(GitServiceTest, ProbeRequestIsAnsweredAndChangesNothing) {
  auto out = RunRpc(GitRpc::ReceivePack, "0000");
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(after_push_calls_, 0);
}

TEST_F(GitServiceTest, BusyServiceIsUnavailable) {
  GitLimits limits = Limits(1, 2, 0, std::chrono::seconds(60));
  GitRepoAccess access{
      [this](const Principal&, const RepoId&, Access) -> Result<RepoHandle> { return handle_; },
      [](const RepoHandle&) {}};
  GitService busy(std::move(access), limits);
  auto held = busy.admission().Acquire(GitRpc::UploadPack, "user:99");
  ASSERT_TRUE(held);
  GitRpcRequest req;
  req.body = std::make_shared<StringSource>("0000");
  auto out = busy.Rpc(User(), id_, GitRpc::UploadPack, std::move(req));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ErrorCode::Unavailable);
}

class GitServiceStreamingTest : public GitServiceTest {
 protected:
  GitServiceStreamingTest() { prebuffer_ = 0; }
};

TEST_F(GitServiceStreamingTest, AbandonedResponseKillsGitAndFreesTheSlot) {
  std::promise<void> destroyed;
  auto body = std::make_shared<BlockingBody>(&destroyed);
  GitRpcRequest req;
  req.body = body;
  auto src = service_->Rpc(User(), id_, GitRpc::UploadPack, std::move(req));
  ASSERT_TRUE(src) << src.error().message;
  EXPECT_EQ(service_->admission().Snapshot().fetches, 1);
  src->reset();  // the client went away: must not wait for the body
  EXPECT_EQ(service_->admission().Snapshot().fetches, 0);
  // The connection closes: the feeder's read fails, it ends and drops the body.
  body->Close();
  body.reset();
  EXPECT_EQ(destroyed.get_future().wait_for(20s), std::future_status::ready);
}

TEST_F(GitServiceStreamingTest, BodyCutShortFailsTheStream) {
  std::promise<void> destroyed;
  auto body = std::make_shared<BlockingBody>(&destroyed);
  GitRpcRequest req;
  req.body = body;
  auto src = service_->Rpc(User(), id_, GitRpc::ReceivePack, std::move(req));
  ASSERT_TRUE(src) << src.error().message;
  body->Close();
  auto out = ReadAll(**src, 1 << 20);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(after_push_calls_, 0);
  EXPECT_EQ(service_->admission().Snapshot().pushes, 0);
}

}  // namespace
}  // namespace hangar::services

// JobRunner (services/jobs/job_runner.h) over the real job store (SQLite, and several
// runners on one database as several processes would be): jobs run once, failures are
// retried then dead, a lost lease fences the old runner out, periodic ticks are taken once
// across runners, and a stopping runner hands its job back.
#include "services/jobs/job_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "db/test_db.h"

namespace hangar::services {
namespace {

using namespace std::chrono_literals;

class JobRunnerTest : public db::testing::DbTest {
 protected:
  JobRunnerOptions Fast() {
    JobRunnerOptions o;
    o.threads = 2;
    o.lease_ms = 600;
    o.poll_ms = 50;
    o.retry_base_ms = 20;
    o.retry_max_ms = 40;
    return o;
  }
  db::JobRecord JobOf(int64_t id) {
    auto j = stores_.jobs->Get(id);
    EXPECT_TRUE(j.has_value() && j->has_value());
    return j.has_value() && j->has_value() ? **j : db::JobRecord{};
  }
  // Waits up to `within` for job `id` to reach `state`.
  bool WaitFor(int64_t id, db::JobState state, std::chrono::milliseconds within = 5000ms) {
    auto end = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < end) {
      if (JobOf(id).state == state) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

TEST_F(JobRunnerTest, AQueuedJobRunsOnceWithItsPayload) {
  JobRunner runner(*stores_.jobs, Fast());
  std::atomic<int> runs{0};
  std::string payload;
  runner.Handle("echo", [&](const db::JobRecord& job, std::stop_token) -> Result<void> {
    payload = job.payload;
    ++runs;
    return {};
  });
  runner.Start();
  auto id = runner.Enqueue({"echo", "", "hello", 3, 0});
  ASSERT_TRUE(id.has_value()) << id.error().message;
  ASSERT_TRUE(WaitFor(*id, db::JobState::Done));
  EXPECT_TRUE(runner.WaitIdle(2000ms));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(payload, "hello");
  EXPECT_EQ(JobOf(*id).attempts, 1);
}

TEST_F(JobRunnerTest, AFailingJobIsRetriedThenDeadWithItsError) {
  JobRunner runner(*stores_.jobs, Fast());
  std::atomic<int> runs{0};
  runner.Handle("flaky", [&](const db::JobRecord&, std::stop_token) -> Result<void> {
    ++runs;
    return MakeError(ErrorCode::Unavailable, "upstream down");
  });
  runner.Start();
  auto id = runner.Enqueue({"flaky", "", "", 3, 0});
  ASSERT_TRUE(id.has_value());
  ASSERT_TRUE(WaitFor(*id, db::JobState::Dead));
  EXPECT_EQ(runs.load(), 3);
  EXPECT_EQ(JobOf(*id).last_error, "upstream down");
}

TEST_F(JobRunnerTest, AJobThatSucceedsOnItsSecondAttemptIsDone) {
  JobRunner runner(*stores_.jobs, Fast());
  std::atomic<int> runs{0};
  runner.Handle("once-flaky", [&](const db::JobRecord& job, std::stop_token) -> Result<void> {
    ++runs;
    if (job.attempts == 1) return MakeError(ErrorCode::Internal, "first time fails");
    return {};
  });
  runner.Start();
  auto id = runner.Enqueue({"once-flaky", "", "", 5, 0});
  ASSERT_TRUE(WaitFor(*id, db::JobState::Done));
  EXPECT_EQ(runs.load(), 2);
}

// A store whose lease renewals fail as a hung or partitioned process's would.
class NoRenewals : public db::JobStore {
 public:
  explicit NoRenewals(db::JobStore& in) : in_(in) {}
  Result<int64_t> Enqueue(const db::NewJob& j, int64_t now) override { return in_.Enqueue(j, now); }
  Result<std::optional<db::JobRecord>> Claim(const std::vector<std::string>& k,
                                             const std::string& c, int64_t l,
                                             int64_t now) override {
    return in_.Claim(k, c, l, now);
  }
  Result<void> Renew(int64_t, const std::string&, int64_t, int64_t) override {
    return MakeError(ErrorCode::Internal, "database unreachable");
  }
  Result<void> Complete(int64_t id, const std::string& c, int64_t now) override {
    return in_.Complete(id, c, now);
  }
  Result<db::JobState> Fail(int64_t id, const std::string& c, const std::string& e, int64_t r,
                            int64_t now) override {
    return in_.Fail(id, c, e, r, now);
  }
  Result<std::optional<db::JobRecord>> Get(int64_t id) override { return in_.Get(id); }
  Result<std::vector<db::JobRecord>> List(db::JobState s, int n) override { return in_.List(s, n); }
  Result<void> Retry(int64_t id, int64_t now) override { return in_.Retry(id, now); }
  Result<int64_t> DeleteDone(int64_t b) override { return in_.DeleteDone(b); }
  Result<db::JobCounts> Counts(int64_t now) override { return in_.Counts(now); }
  Result<bool> TakeTick(const std::string& n, int64_t i, int64_t now) override {
    return in_.TakeTick(n, i, now);
  }

 private:
  db::JobStore& in_;
};

TEST_F(JobRunnerTest, ALostLeaseIsTakenUpElsewhereAndTheOldRunCannotComplete) {
  auto other = OpenAgain();  // a second process on the same database
  ASSERT_TRUE(other.has_value()) << other.error().message;
  NoRenewals hung(*stores_.jobs);
  JobRunnerOptions one_thread = Fast();
  one_thread.threads = 1;  // busy with the job: only B can take it up
  JobRunner a(hung, one_thread);
  std::atomic<bool> a_started{false}, a_saw_stop{false};
  a.Handle("export", [&](const db::JobRecord&, std::stop_token stop) -> Result<void> {
    a_started = true;
    // Runs past its lease; nothing renews it. Returns success once told to stop.
    auto end = std::chrono::steady_clock::now() + 3s;
    while (!stop.stop_requested() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(5ms);
    }
    a_saw_stop = stop.stop_requested();
    return {};
  });
  a.Start();
  auto id = a.Enqueue({"export", "", "", 5, 0});
  ASSERT_TRUE(id.has_value());
  for (int i = 0; i < 200 && !a_started; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(a_started);

  JobRunner b(*other->jobs, Fast());
  std::atomic<int> b_runs{0};
  b.Handle("export", [&](const db::JobRecord& job, std::stop_token) -> Result<void> {
    EXPECT_EQ(job.attempts, 2);
    ++b_runs;
    return {};
  });
  b.Start();
  ASSERT_TRUE(WaitFor(*id, db::JobState::Done));
  EXPECT_EQ(b_runs.load(), 1);
  b.Stop();
  // A's claim is fenced: whatever it does now, the job stays done, run once by B.
  a.Stop();
  EXPECT_EQ(JobOf(*id).state, db::JobState::Done);
  EXPECT_EQ(JobOf(*id).attempts, 2);
}

TEST_F(JobRunnerTest, APeriodicJobIsQueuedOncePerTickAcrossRunners) {
  auto other = OpenAgain();
  ASSERT_TRUE(other.has_value());
  std::atomic<int> runs{0};
  auto count = [&](const db::JobRecord&, std::stop_token) -> Result<void> {
    ++runs;
    return {};
  };
  PeriodicJob tick{"tick", "", 400, 0, 1};
  JobRunner a(*stores_.jobs, Fast()), b(*other->jobs, Fast());
  for (JobRunner* r : {&a, &b}) {
    r->Handle("tick", count);
    r->Every(tick);
  }
  a.Start();
  b.Start();
  std::this_thread::sleep_for(2000ms);
  a.Stop();
  b.Stop();
  // About five ticks in two seconds (each runner asks every 400 ms); two runners asking
  // must not double them.
  EXPECT_GE(runs.load(), 3);
  EXPECT_LE(runs.load(), 6);
}

TEST_F(JobRunnerTest, AStoppingRunnerHandsItsJobBackAtOnce) {
  std::atomic<bool> started{false};
  int64_t id = 0;
  {
    JobRunner runner(*stores_.jobs, Fast());
    runner.Handle("long", [&](const db::JobRecord&, std::stop_token stop) -> Result<void> {
      started = true;
      while (!stop.stop_requested()) std::this_thread::sleep_for(5ms);
      return MakeError(ErrorCode::Unavailable, "stopped");
    });
    runner.Start();
    auto queued = runner.Enqueue({"long", "", "", 5, 0});
    ASSERT_TRUE(queued.has_value());
    id = *queued;
    for (int i = 0; i < 200 && !started; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(started);
  }  // destroyed: stopped
  db::JobRecord j = JobOf(id);
  EXPECT_EQ(j.state, db::JobState::Queued);
  EXPECT_EQ(j.last_error, "its process stopped during the run");
  // Another runner takes it up without waiting for a lease.
  JobRunner next(*stores_.jobs, Fast());
  next.Handle("long", [](const db::JobRecord&, std::stop_token) -> Result<void> { return {}; });
  next.Start();
  EXPECT_TRUE(WaitFor(id, db::JobState::Done, 2000ms));
}

}  // namespace
}  // namespace hangar::services

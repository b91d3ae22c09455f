// The job queue's store (db/job_store.h) on each engine: claims, leases, fencing, retries,
// the dead-letter state, dedup keys, periodic ticks, and concurrent claimers that never
// take one job twice.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class JobStoreTest : public testing::StoreTest {
 protected:
  JobStore& jobs() { return *stores_.jobs; }
  int64_t Add(std::string kind, std::string key = "", int max_attempts = 5, int64_t run_at = 0) {
    NewJob j;
    j.kind = std::move(kind);
    j.key = std::move(key);
    j.payload = R"({"x":1})";
    j.max_attempts = max_attempts;
    j.run_at = run_at;
    auto id = jobs().Enqueue(j, 1000);
    EXPECT_TRUE(id.has_value()) << id.error().message;
    return id ? *id : 0;
  }
};

TEST_P(JobStoreTest, ClaimRunsTheDueJobOnceAndCompleteFinishesIt) {
  int64_t id = Add("gc");
  auto none = jobs().Claim({"other"}, "c1", 30000, 2000);
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_FALSE(none->has_value()) << "a kind not asked for is not claimed";

  auto got = jobs().Claim({"gc"}, "c1", 30000, 2000);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, id);
  EXPECT_EQ((*got)->payload, R"({"x":1})");
  EXPECT_EQ((*got)->state, JobState::Running);
  EXPECT_EQ((*got)->attempts, 1);
  EXPECT_EQ((*got)->lease_until, 32000);
  EXPECT_FALSE(jobs().Claim({"gc"}, "c2", 30000, 3000)->has_value()) << "held by c1";

  EXPECT_EQ(jobs().Complete(id, "c2", 4000).error().code, ErrorCode::Conflict);
  ASSERT_TRUE(jobs().Complete(id, "c1", 4000).has_value());
  EXPECT_EQ((*jobs().Get(id))->state, JobState::Done);
  EXPECT_FALSE(jobs().Claim({""}, "c2", 30000, 5000)->has_value());
}

TEST_P(JobStoreTest, AJobIsNotClaimedBeforeItsTime) {
  Add("gc", "", 5, 10000);
  EXPECT_FALSE(jobs().Claim({"gc"}, "c", 1000, 9999)->has_value());
  EXPECT_TRUE(jobs().Claim({"gc"}, "c", 1000, 10000)->has_value());
}

TEST_P(JobStoreTest, ALeaseThatRanOutIsClaimedAgainAndTheOldClaimIsFenced) {
  int64_t id = Add("export");
  ASSERT_TRUE(jobs().Claim({"export"}, "dead-worker", 5000, 1000)->has_value());
  // Renewed in time, it stays.
  ASSERT_TRUE(jobs().Renew(id, "dead-worker", 5000, 5000).has_value());
  EXPECT_FALSE(jobs().Claim({"export"}, "other", 5000, 9999)->has_value());
  // Its process died: the lease runs out and another claims it.
  auto again = jobs().Claim({"export"}, "other", 5000, 10000);
  ASSERT_TRUE(again.has_value() && again->has_value());
  EXPECT_EQ((*again)->attempts, 2);
  EXPECT_EQ(jobs().Renew(id, "dead-worker", 5000, 10001).error().code, ErrorCode::Conflict);
  EXPECT_EQ(jobs().Complete(id, "dead-worker", 10001).error().code, ErrorCode::Conflict);
  ASSERT_TRUE(jobs().Complete(id, "other", 10002).has_value());
}

TEST_P(JobStoreTest, FailuresRetryThenTheJobIsDeadWithItsError) {
  int64_t id = Add("mirror", "", 2);
  ASSERT_TRUE(jobs().Claim({"mirror"}, "c", 1000, 1000)->has_value());
  auto st = jobs().Fail(id, "c", "upstream refused", 5000, 1500);
  ASSERT_TRUE(st.has_value()) << st.error().message;
  EXPECT_EQ(*st, JobState::Queued);
  EXPECT_FALSE(jobs().Claim({"mirror"}, "c", 1000, 4999)->has_value()) << "backing off";
  ASSERT_TRUE(jobs().Claim({"mirror"}, "c", 1000, 5000)->has_value());
  st = jobs().Fail(id, "c", "upstream refused again", 9000, 5500);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(*st, JobState::Dead);
  auto dead = jobs().List(JobState::Dead, 10);
  ASSERT_TRUE(dead.has_value());
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ(dead->front().last_error, "upstream refused again");
  EXPECT_EQ(jobs().Counts(6000)->dead, 1);
  EXPECT_FALSE(jobs().Claim({"mirror"}, "c", 1000, 99999)->has_value());

  ASSERT_TRUE(jobs().Retry(id, 10000).has_value());
  EXPECT_EQ(jobs().Retry(id, 10000).error().code, ErrorCode::NotFound) << "no longer dead";
  auto back = jobs().Claim({"mirror"}, "c", 1000, 10000);
  ASSERT_TRUE(back.has_value() && back->has_value());
  EXPECT_EQ((*back)->attempts, 1);
}

TEST_P(JobStoreTest, AJobWhoseProcessDiesEachTimeEndsDead) {
  int64_t id = Add("poison", "", 2);
  ASSERT_TRUE(jobs().Claim({"poison"}, "a", 1000, 1000)->has_value());
  ASSERT_TRUE(jobs().Claim({"poison"}, "b", 1000, 2000)->has_value());   // a died
  EXPECT_FALSE(jobs().Claim({"poison"}, "c", 1000, 3000)->has_value());  // b died too
  auto j = jobs().Get(id);
  ASSERT_TRUE(j.has_value() && j->has_value());
  EXPECT_EQ((*j)->state, JobState::Dead);
  EXPECT_NE((*j)->last_error.find("lease ran out"), std::string::npos);
}

TEST_P(JobStoreTest, AKeyedJobJoinsTheQueuedOneOfItsKey) {
  int64_t a = Add("maintain", "models/acme/bert", 5, 5000);
  int64_t b = Add("maintain", "models/acme/bert", 5, 3000);
  int64_t other = Add("maintain", "models/acme/gpt");
  int64_t other_kind = Add("export", "models/acme/bert");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
  EXPECT_NE(a, other_kind);
  EXPECT_EQ((*jobs().Get(a))->run_at, 3000) << "the earlier time wins";
  // Once running, a new job of the key is queued beside it (the running one may have read
  // the repo before the change that asked for the new one).
  auto claimed = jobs().Claim({"maintain"}, "c", 1000, 3000);
  ASSERT_TRUE(claimed.has_value() && claimed->has_value());
  int64_t running = (*claimed)->id;
  int64_t next = Add("maintain", (*claimed)->key);
  EXPECT_NE(next, running);
  // A failed run queued again while that one waits is folded into it.
  auto st = jobs().Fail(running, "c", "repack failed", 9000, 3500);
  ASSERT_TRUE(st.has_value()) << st.error().message;
  EXPECT_EQ(*st, JobState::Done);
}

TEST_P(JobStoreTest, ATickIsTakenByOneCallerPerInterval) {
  EXPECT_TRUE(*jobs().TakeTick("gc", 60000, 1000));
  EXPECT_FALSE(*jobs().TakeTick("gc", 60000, 1001));
  EXPECT_FALSE(*jobs().TakeTick("gc", 60000, 60999));
  EXPECT_TRUE(*jobs().TakeTick("gc", 60000, 61000));
  EXPECT_TRUE(*jobs().TakeTick("other", 60000, 61000)) << "names tick apart";
}

TEST_P(JobStoreTest, ConcurrentClaimersNeverTakeOneJobTwice) {
  constexpr int kJobs = 200;
  for (int i = 0; i < kJobs; ++i) Add("work");
  std::vector<Stores> replicas;
  for (int r = 0; r < 3; ++r) {
    auto s = OpenAgain(4);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    replicas.push_back(std::move(*s));
  }
  std::mutex mu;
  std::multiset<int64_t> done;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      JobStore& store = *replicas[static_cast<size_t>(t % 3)].jobs;
      std::string claim = "claimer-" + std::to_string(t);
      for (;;) {
        auto j = store.Claim({"work"}, claim, 60000, 2000);
        if (!j) {
          ++errors;
          continue;
        }
        if (!j->has_value()) return;
        if (!store.Complete((*j)->id, claim, 2001)) ++errors;
        std::lock_guard lock(mu);
        done.insert((*j)->id);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(done.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<int64_t>(done.begin(), done.end()).size(), static_cast<size_t>(kJobs))
      << "a job was claimed twice";
  auto counts = jobs().Counts(3000);
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->queued + counts->running, 0);
  EXPECT_EQ(*jobs().DeleteDone(3000), kJobs);
}

INSTANTIATE_TEST_SUITE_P(Engines, JobStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

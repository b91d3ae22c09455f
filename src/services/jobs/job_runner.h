#pragma once
// JobRunner: runs the jobs of the durable queue (db/job_store.h; issue 17 §3) in this
// process — `hangar serve` in-process by default, `hangar worker` alone. Every process
// that runs one takes jobs from the same table, so a deployment's work spreads over its
// processes; a process that dies mid-job leaves its job to the lease, and another takes it
// up once the lease has run out.
//
// A job runs on one of the runner's threads while the runner renews its lease every third
// of it. Success completes the job; an error queues it again after a back-off (base ×
// 2^(attempt−1), jittered, capped), until its attempts are spent and it is dead. A job
// whose claim was lost (its lease ran out and another process took it) has its stop token
// requested, and its outcome is not recorded.
//
// Periodic jobs (Every) are queued by whichever process first sees a tick due
// (JobStore::TakeTick), so each tick is queued once in the whole deployment and runs on
// one process.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "db/change_feed.h"
#include "db/job_store.h"

namespace hangar::services {

// Runs one job: its payload is `job.payload`. An error has the job retried (and, past its
// attempts, dead with that error). `stop` is requested when the process stops or the claim
// is lost; a handler that sees it should return soon (its job is then taken up again).
using JobHandler = std::function<Result<void>(const db::JobRecord& job, std::stop_token stop)>;

struct JobRunnerOptions {
  int threads = 2;                  // jobs run at once by this process
  int64_t lease_ms = 30000;         // a claim's lease; renewed every lease_ms / 3 while it runs
  int64_t poll_ms = 1000;           // an idle thread looks for due jobs this often (an Enqueue
                                    // here, or heard on `changes` from another process, wakes it)
  int64_t retry_base_ms = 2000;     // back-off after the first failure
  int64_t retry_max_ms = 600000;    // its cap
  int64_t keep_done_ms = 86400000;  // done jobs are deleted this long after they finished
  std::function<int64_t()> now_ms;  // unix ms; defaults to NowUnixMillis
  // The feed an Enqueue is announced on (topic "job"), so idle runners of every process
  // claim it at once; none: they find it within poll_ms.
  db::ChangeFeed* changes = nullptr;
};

// A job queued every `interval_ms` (the first time `first_delay_ms` after Start).
struct PeriodicJob {
  std::string kind;
  std::string payload;
  int64_t interval_ms = 3600000;
  int64_t first_delay_ms = 60000;
  int max_attempts = 1;  // a failed tick waits for the next one
};

// Thread-safe. Handle and Every before Start; Stop (or the destructor) joins the threads.
class JobRunner {
 public:
  JobRunner(db::JobStore& store, JobRunnerOptions options);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Jobs of `kind` run with `handler`; this runner claims only kinds it handles.
  void Handle(std::string kind, JobHandler handler);
  // `job` is queued on its schedule (by one process of all that run it).
  void Every(PeriodicJob job);
  // Starts `threads` job threads and the lease and schedule keeper.
  void Start();
  // Requests every running handler to stop and joins the threads; their jobs stay running
  // in the table until their leases run out. Idempotent.
  void Stop();

  // Queues a job for whichever process handles its kind (db::JobStore::Enqueue) and wakes
  // the runners. Works without Start (a process that only queues). Errors: the store's.
  Result<int64_t> Enqueue(db::NewJob job);

  // Jobs in `state`, newest first, at most `limit` (hangar admin jobs list). Errors: the
  // store's.
  Result<std::vector<db::JobRecord>> List(db::JobState state, int limit) {
    return store_.List(state, limit);
  }
  // Queues dead job `id` again with its attempts reset. Errors: NotFound, the store's.
  Result<void> Retry(int64_t id);

  // Blocks until no job of this runner's kinds is due or running here (tests). Returns
  // false when `timeout` passed first.
  bool WaitIdle(std::chrono::milliseconds timeout);

 private:
  struct Running {
    int64_t id;
    std::string claim;
    std::stop_source stop;
  };
  static constexpr uint64_t kBusy = ~uint64_t{0};
  void Work(size_t index, std::stop_token stop);
  void Wake();
  void Keep(std::stop_token stop);
  // Runs the claimed `job` and records its outcome (`process_stop`: the thread's).
  void Run(const db::JobRecord& job, std::stop_source& job_stop, std::stop_token process_stop);
  int64_t Now() const { return options_.now_ms(); }
  int64_t BackOff(int attempts) const;

  db::JobStore& store_;
  JobRunnerOptions options_;
  std::map<std::string, JobHandler> handlers_;  // set before Start
  std::vector<std::string> kinds_;              // handlers_'s keys
  std::vector<PeriodicJob> periodic_;           // set before Start
  const std::string process_;                   // this process's claim prefix

  std::mutex mu_;
  std::condition_variable_any wake_;  // an Enqueue, a job's end, Stop
  std::condition_variable idle_;      // a thread found nothing due (WaitIdle)
  uint64_t wakes_ = 0;                // guarded by mu_: counts wake-ups, so none is lost
  // Guarded by mu_: per job thread, the wakes_ count at the start of its last claim that
  // found nothing due; kBusy while it claims or runs.
  std::vector<uint64_t> idle_at_;
  std::vector<Running*> running_;  // guarded by mu_
  uint64_t next_claim_ = 0;        // guarded by mu_
  bool started_ = false;
  db::ChangeFeed::Subscription heard_;  // wakes the threads on another process's Enqueue
  std::vector<std::jthread> threads_;   // last: joined first
};

}  // namespace hangar::services

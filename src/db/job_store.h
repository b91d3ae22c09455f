#pragma once
// JobStore: the durable job queue (issue 17 §3) — one table every process of a deployment
// shares. A job is a kind, a payload and a dedup key; a process claims it with a lease,
// renews the lease while it runs, and completes or fails it. A job whose lease ran out
// (its process died) is claimed again; a job that failed max_attempts times is dead (the
// dead-letter state) and stays, with its last error, until an operator retries or deletes
// it. Claims never hand one job to two processes at once: PostgreSQL claims with
// SELECT … FOR UPDATE SKIP LOCKED, SQLite under its one writer. Completion is fenced by
// the claim's token, so a process whose lease was taken over cannot complete the job twice.
// Interface only; SqlJobStore (db/sql/) implements it on both engines.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace hangar::db {

enum class JobState { Queued, Running, Done, Dead };

// "queued", "running", "done", "dead".
std::string_view JobStateName(JobState s);

struct JobRecord {
  int64_t id = 0;
  std::string kind;     // what runs it ("gc", "maintain", "viewer.export", ...)
  std::string key;      // dedup key within the kind ("" = none): one queued job per key
  std::string payload;  // the kind's own text (JSON)
  JobState state = JobState::Queued;
  int attempts = 0;         // claims so far
  int max_attempts = 5;     // then dead
  int64_t run_at = 0;       // unix ms: not claimed before
  std::string claim;        // the running claim's token ("" unless running)
  int64_t lease_until = 0;  // unix ms: a running job whose lease ran out is claimed again
  std::string last_error;
  int64_t created_at = 0;  // unix ms
  int64_t updated_at = 0;  // unix ms
};

// A new job.
struct NewJob {
  std::string kind;
  std::string key;  // "" = no dedup
  std::string payload;
  int max_attempts = 5;
  int64_t run_at = 0;  // unix ms
};

// Counts by state, for metrics (hangar_jobs{state}).
struct JobCounts {
  int64_t queued = 0;   // waiting, including those whose run_at is still ahead
  int64_t running = 0;  // claimed, lease not run out
  int64_t dead = 0;
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class JobStore {
 public:
  virtual ~JobStore() = default;

  // Adds `job`, or — when its key is set and a job of that kind and key is queued (not
  // yet running) — returns that one's id and leaves it as it is (its run_at moves to the
  // earlier of the two). `now`: unix ms.
  virtual Result<int64_t> Enqueue(const NewJob& job, int64_t now) = 0;
  // Claims the job due first (run_at ≤ now, queued, or running with its lease run out) of
  // one of `kinds` ("" in kinds: any kind) for `lease_ms`, with token `claim`; nullopt when
  // none is due. The job's attempts grows by one.
  virtual Result<std::optional<JobRecord>> Claim(const std::vector<std::string>& kinds,
                                                 const std::string& claim, int64_t lease_ms,
                                                 int64_t now) = 0;
  // Extends the lease of job `id` held by `claim` to now + lease_ms. Errors: Conflict when
  // the claim no longer holds it (its lease ran out and another process took it).
  virtual Result<void> Renew(int64_t id, const std::string& claim, int64_t lease_ms,
                             int64_t now) = 0;
  // Marks job `id` done. Errors: Conflict when `claim` no longer holds it.
  virtual Result<void> Complete(int64_t id, const std::string& claim, int64_t now) = 0;
  // Records a failure of job `id`: queued again at `retry_at` while attempts < max_attempts,
  // else dead. Returns the new state. Errors: Conflict when `claim` no longer holds it.
  virtual Result<JobState> Fail(int64_t id, const std::string& claim, const std::string& error,
                                int64_t retry_at, int64_t now) = 0;
  // The job `id`, or nullopt.
  virtual Result<std::optional<JobRecord>> Get(int64_t id) = 0;
  // Jobs in `state`, newest first, at most `limit` (admin listing).
  virtual Result<std::vector<JobRecord>> List(JobState state, int limit) = 0;
  // Puts a dead job back in the queue with its attempts and last error reset. Errors:
  // NotFound when no dead job has that id.
  virtual Result<void> Retry(int64_t id, int64_t now) = 0;
  // Deletes done jobs updated before `before` (unix ms); returns how many.
  virtual Result<int64_t> DeleteDone(int64_t before) = 0;
  // Counts by state at `now`.
  virtual Result<JobCounts> Counts(int64_t now) = 0;
  // A periodic job's tick (issue 17 §3, "periodic jobs run on exactly one process at a
  // time"): true for exactly one caller per tick of `name` — the first to ask at or after
  // its due time, which the call moves to now + interval_ms — false for every other
  // process asking meanwhile. A name asked for the first time is due at once.
  virtual Result<bool> TakeTick(const std::string& name, int64_t interval_ms, int64_t now) = 0;
};

}  // namespace hangar::db

#pragma once
// SqlJobStore: JobStore over a Pool (the jobs and job_ticks tables, migration 11).
// Thread-safe.

#include <memory>

#include "db/job_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlJobStore : public JobStore {
 public:
  explicit SqlJobStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<int64_t> Enqueue(const NewJob& job, int64_t now) override;
  Result<std::optional<JobRecord>> Claim(const std::vector<std::string>& kinds,
                                         const std::string& claim, int64_t lease_ms,
                                         int64_t now) override;
  Result<void> Renew(int64_t id, const std::string& claim, int64_t lease_ms, int64_t now) override;
  Result<void> Complete(int64_t id, const std::string& claim, int64_t now) override;
  Result<JobState> Fail(int64_t id, const std::string& claim, const std::string& error,
                        int64_t retry_at, int64_t now) override;
  Result<std::optional<JobRecord>> Get(int64_t id) override;
  Result<std::vector<JobRecord>> List(JobState state, int limit) override;
  Result<void> Retry(int64_t id, int64_t now) override;
  Result<int64_t> DeleteDone(int64_t before) override;
  Result<JobCounts> Counts(int64_t now) override;
  Result<bool> TakeTick(const std::string& name, int64_t interval_ms, int64_t now) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

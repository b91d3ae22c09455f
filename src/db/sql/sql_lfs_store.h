#pragma once
// SqlLfsStore: LfsStore over a Pool. Thread-safe.

#include <memory>

#include "db/lfs_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlLfsStore : public LfsStore {
 public:
  explicit SqlLfsStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<void> Link(int64_t repo_id, const Sha256& oid, uint64_t size) override;
  Result<std::optional<uint64_t>> IsLinked(int64_t repo_id, const Sha256& oid) override;
  Result<void> Unlink(int64_t repo_id, const Sha256& oid) override;
  Result<std::vector<LfsLink>> ListForRepo(int64_t repo_id, std::optional<Sha256> after,
                                           int limit) override;
  Result<int64_t> CountLinks(const Sha256& oid) override;
  Result<int64_t> RecordPurge(const LfsPurgeRecord& purge) override;
  Result<std::vector<LfsPurgeRecord>> ListPurges(int64_t repo_id, int limit) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

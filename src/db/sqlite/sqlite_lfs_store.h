#pragma once
// SqliteLfsStore: LfsStore over a SqlitePool. Thread-safe.

#include <memory>

#include "db/lfs_store.h"
#include "db/sqlite/sqlite_pool.h"

namespace hangar::db {

class SqliteLfsStore : public LfsStore {
 public:
  explicit SqliteLfsStore(std::shared_ptr<SqlitePool> pool) : pool_(std::move(pool)) {}

  Result<void> Link(int64_t repo_id, const Sha256& oid, uint64_t size) override;
  Result<std::optional<uint64_t>> IsLinked(int64_t repo_id, const Sha256& oid) override;
  Result<void> Unlink(int64_t repo_id, const Sha256& oid) override;
  Result<std::vector<LfsLink>> ListForRepo(int64_t repo_id, std::optional<Sha256> after,
                                           int limit) override;
  Result<int64_t> CountLinks(const Sha256& oid) override;

 private:
  std::shared_ptr<SqlitePool> pool_;
};

}  // namespace hangar::db

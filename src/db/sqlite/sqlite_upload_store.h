#pragma once
// SqliteUploadStore: UploadStore over a SqlitePool. Thread-safe.

#include <memory>

#include "db/sqlite/sqlite_pool.h"
#include "db/upload_store.h"

namespace hangar::db {

class SqliteUploadStore : public UploadStore {
 public:
  explicit SqliteUploadStore(std::shared_ptr<SqlitePool> pool) : pool_(std::move(pool)) {}

  Result<void> Create(const UploadRecord& upload) override;
  Result<std::optional<UploadRecord>> Get(const std::string& id) override;
  Result<std::optional<UploadRecord>> FindOpen(int64_t repo_id, int64_t user_id,
                                               const Sha256& sha256, uint64_t size,
                                               int64_t now) override;
  Result<int64_t> CountOpen(int64_t user_id, int64_t now) override;
  Result<void> SetExpiry(const std::string& id, int64_t expires_at) override;
  Result<void> MarkCompleted(const std::string& id, int64_t when, int64_t expires_at) override;
  Result<void> Delete(const std::string& id) override;
  Result<std::vector<UploadRecord>> ListExpired(int64_t now, int limit) override;

 private:
  std::shared_ptr<SqlitePool> pool_;
};

}  // namespace hangar::db

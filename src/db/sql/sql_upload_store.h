#pragma once
// SqlUploadStore: UploadStore over a Pool. Thread-safe.

#include <memory>

#include "db/sql/sql.h"
#include "db/upload_store.h"

namespace hangar::db {

class SqlUploadStore : public UploadStore {
 public:
  explicit SqlUploadStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

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
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

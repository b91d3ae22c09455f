#pragma once
// SqlGateStore: GateStore over a Pool (table access_requests, migration 18). Thread-safe.

#include <memory>

#include "db/gate_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlGateStore : public GateStore {
 public:
  explicit SqlGateStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<std::optional<AccessRequestRecord>> Get(int64_t repo_id, int64_t user_id) override;
  Result<std::pair<AccessRequestRecord, bool>> Insert(const AccessRequestRecord& r) override;
  Result<void> SetStatus(int64_t repo_id, int64_t user_id, AccessStatus status,
                         std::string_view reason, int64_t now) override;
  Result<void> Grant(int64_t repo_id, int64_t user_id, int64_t now) override;
  Result<std::vector<AccessRequestRecord>> List(int64_t repo_id, AccessStatus status,
                                                int64_t after_created_at, int64_t after_user,
                                                int limit) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

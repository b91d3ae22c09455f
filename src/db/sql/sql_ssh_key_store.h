#pragma once
// SqlSshKeyStore: SshKeyStore over a Pool (table ssh_keys, migration 14). Thread-safe.

#include <memory>

#include "db/sql/sql.h"
#include "db/ssh_key_store.h"

namespace hangar::db {

class SqlSshKeyStore : public SshKeyStore {
 public:
  explicit SqlSshKeyStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<SshKeyRecord> Add(const SshKeyRecord& key) override;
  Result<SshKeyRecord> Get(int64_t id) override;
  Result<SshKeyRecord> FindByBlob(std::string_view key_type, std::string_view blob_base64) override;
  Result<std::vector<SshKeyRecord>> ListForUser(int64_t user_id) override;
  Result<std::vector<SshKeyRecord>> ListForRepo(int64_t repo_id) override;
  Result<void> Delete(int64_t id) override;
  Result<void> Touch(int64_t id, int64_t now) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

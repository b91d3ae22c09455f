#pragma once
// SqlRegistryStore: RegistryStore over a Pool (tables of migration 8). Thread-safe.
// Every write is one BEGIN IMMEDIATE transaction, so a version number, an alias move and
// its log entry are never seen apart.

#include <memory>

#include "db/registry_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlRegistryStore : public RegistryStore {
 public:
  explicit SqlRegistryStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<int64_t> CreateModel(const ModelRecord& m) override;
  Result<int64_t> CreateModelWithVersion(const ModelRecord& m, const VersionRecord& v) override;
  Result<std::optional<ModelRecord>> GetModel(const std::string& name) override;
  Result<std::optional<ModelRecord>> GetModelById(int64_t id) override;
  Result<std::vector<ModelRecord>> ListModels(const ModelQuery& q) override;
  Result<void> UpdateModel(int64_t id, const std::optional<std::string>& description,
                           const std::optional<std::string>& new_name, int64_t now) override;
  Result<void> DeleteModel(int64_t id) override;
  Result<void> SetModelTag(int64_t id, const std::string& key,
                           const std::optional<std::string>& value, int64_t now) override;

  Result<int64_t> CreateVersion(const VersionRecord& v) override;
  Result<std::optional<VersionRecord>> GetVersion(int64_t model_id, int64_t version) override;
  Result<std::vector<VersionRecord>> ListVersions(const VersionQuery& q) override;
  Result<void> UpdateVersion(int64_t model_id, int64_t version,
                             const std::optional<std::string>& description,
                             std::optional<bool> archived, int64_t now) override;
  Result<void> DeleteVersion(int64_t model_id, int64_t version, int64_t actor_id,
                             const std::string& actor, int64_t now) override;
  Result<void> SetVersionTag(int64_t model_id, int64_t version, const std::string& key,
                             const std::optional<std::string>& value, int64_t now) override;

  Result<int64_t> MoveAlias(int64_t model_id, const std::string& alias,
                            std::optional<int64_t> version, int64_t actor_id,
                            const std::string& actor, int64_t now) override;
  Result<std::vector<AliasEvent>> ListAliasEvents(int64_t model_id, int64_t before_id,
                                                  int64_t limit) override;

  Result<std::optional<std::string>> GetRole(int64_t model_id, int64_t user_id) override;
  Result<void> SetRole(int64_t model_id, int64_t user_id,
                       const std::optional<std::string>& role) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

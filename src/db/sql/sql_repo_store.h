#pragma once
// SqlRepoStore: RepoStore over a Pool. Thread-safe.

#include <memory>

#include "db/repo_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlRepoStore : public RepoStore {
 public:
  explicit SqlRepoStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<RepoRecord> Create(const RepoRecord& repo) override;
  Result<RepoRecord> Find(const RepoId& id) override;
  Result<RepoRecord> FindById(int64_t id) override;
  Result<std::vector<RepoRecord>> FindFolded(RepoType type, std::string_view ns,
                                             std::string_view name) override;
  Result<void> Delete(const RepoId& id) override;
  Result<RepoRecord> Move(const RepoId& from, const RepoId& to) override;
  Result<void> SetPrivate(int64_t id, bool is_private) override;
  Result<void> SetMirror(int64_t id, bool is_mirror) override;
  Result<void> SetGated(int64_t id, std::string_view gated) override;
  Result<void> UpdateHead(int64_t id, std::string_view last_commit, int64_t last_modified) override;
  Result<RepoPage> List(const RepoQuery& q) override;
  Result<RepoCounts> Count(std::string_view ns, bool with_private) override;
  Result<void> SetCardMeta(int64_t id, std::string_view library, std::string_view pipeline,
                           const std::vector<std::string>& tags) override;
  Result<void> AddDownloads(int64_t id, int64_t day, int64_t n) override;
  Result<int64_t> RefreshTrending(int64_t today) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

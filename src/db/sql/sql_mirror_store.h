#pragma once
// SqlMirrorStore: MirrorStore over a Pool (tables mirrors and upstream_tokens, migrations 15–17).
// Thread-safe.

#include <memory>

#include "db/mirror_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlMirrorStore : public MirrorStore {
 public:
  explicit SqlMirrorStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<MirrorRecord> Add(const MirrorRecord& m) override;
  Result<MirrorRecord> Get(int64_t id) override;
  Result<std::vector<MirrorRecord>> ForRepo(int64_t repo_id) override;
  Result<std::vector<MirrorRecord>> DuePulls(int64_t now, int limit) override;
  Result<void> RecordSync(int64_t id, int64_t now, std::string_view error,
                          int64_t next_sync_at) override;
  Result<void> Delete(int64_t id) override;
  Result<void> SetCredential(int64_t id, std::string_view credential) override;
  Result<void> PutUpstreamToken(const UpstreamTokenRecord& t) override;
  Result<std::optional<UpstreamTokenRecord>> GetUpstreamToken(int64_t user_id,
                                                              std::string_view upstream) override;
  Result<std::vector<UpstreamTokenRecord>> ListUpstreamTokens(int64_t user_id) override;
  Result<void> DeleteUpstreamToken(int64_t user_id, std::string_view upstream) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

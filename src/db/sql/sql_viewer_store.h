#pragma once
// SqlViewerStore: ViewerStore over a Pool (tables of migration 6). Thread-safe.
// Every write is one BEGIN IMMEDIATE transaction that first checks the export row's source
// commit, so the superseded check and the write cannot be split by another writer.

#include <cstdint>
#include <functional>
#include <memory>

#include "db/sql/sql.h"
#include "db/viewer_store.h"

namespace hangar::db {

class SqlViewerStore : public ViewerStore {
 public:
  // `now` gives the unix seconds written to ViewerExport::updated_at (NowUnix by default;
  // tests pass their own).
  explicit SqlViewerStore(std::shared_ptr<Pool> pool, std::function<int64_t()> now = nullptr);

  Result<void> BeginExport(int64_t repo_id, const std::string& source_commit, bool viewer,
                           const std::vector<ViewerSplit>& splits,
                           const std::string& language) override;
  Result<std::optional<ViewerExport>> GetExport(int64_t repo_id) override;
  Result<bool> SetExportStatus(int64_t repo_id, const std::string& source_commit,
                               ExportStatus status, const std::string& export_commit,
                               const std::string& error_code, const std::string& error) override;
  Result<bool> PutSplit(int64_t repo_id, const std::string& source_commit, const ViewerSplit& split,
                        const std::optional<std::vector<ViewerFile>>& files) override;
  Result<std::vector<ViewerSplit>> ListSplits(int64_t repo_id) override;
  Result<std::vector<ViewerFile>> ListFiles(int64_t repo_id, const std::string& config,
                                            const std::string& split) override;
  Result<std::vector<int64_t>> ListUnfinished() override;
  Result<void> Delete(int64_t repo_id) override;

 private:
  std::shared_ptr<Pool> pool_;
  std::function<int64_t()> now_;
};

}  // namespace hangar::db

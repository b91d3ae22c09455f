#pragma once
// The export job (dataset-viewer.md §7–8, issue 15): for a dataset repo's default-branch
// head, derive its configs and splits, export each split to Parquet, store the shards as
// LFS objects of the repo, record each split's progress, figures or error in the
// ViewerStore, and commit the export to refs/convert/parquet. Blocking; run by the
// ExportQueue's thread (or, later, a `hangar worker`).
//
// Crash safety: the ref moves once, by a compare-and-swap, after every shard is stored,
// so refs/convert/parquet is never half-written; a job killed midway leaves its export
// row Pending or Running, and a restarted process runs it again from the start
// (ViewerStore::ListUnfinished), first clearing what the dead job left in its work dir.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/result.h"
#include "db/lfs_store.h"
#include "db/repo_store.h"
#include "db/viewer_store.h"
#include "duckdb/engine.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"
#include "services/viewer/parquet_export.h"
#include "storage/blob_store.h"

namespace hangar::services::viewer {

// What the job uses; all outlive it.
struct ExportDeps {
  db::RepoStore& repos;
  db::ViewerStore& store;
  db::LfsStore& lfs;
  storage::BlobStore& blobs;
  RepoService& repo_service;
  ContentService& content;
  // An engine with allow_writes whose allowed directories hold work_dir and cache_dir.
  duckdb::Engine& engine;
};

struct ExportOptions {
  std::string work_dir;   // sources and shards being made: <work_dir>/<repo id>/…
  std::string cache_dir;  // the shards queries read: <cache_dir>/<sha256>.parquet
  ExportLimits limits;
  // Called after each write of the store for a repo (a split done, the export finished),
  // so readers drop what they cached of it.
  std::function<void(int64_t repo_id)> on_change;
};

// Runs exports. Thread-safe if the deps are (each Run works in its own repo's directory).
class ExportJob {
 public:
  ExportJob(ExportDeps deps, ExportOptions options);

  // Exports the default-branch head of dataset repo `repo_id`; returns early, leaving the
  // newer job the repo's rows, once `cancel` is set (a newer push) or the store says it
  // was superseded. A repo that is gone or not a dataset is a no-op. The errors of the
  // data are recorded per split, not returned; errors: Internal (store, git, disk).
  Result<void> Run(int64_t repo_id, const std::atomic<bool>& cancel);

 private:
  struct Context;
  // <work_dir>/<repo id>.attempt: the source commit a job runs and how many runs of it began.
  std::string AttemptPath(int64_t repo_id) const;
  // Counts one more run of `source` (1 when the file names another commit). Errors: Internal.
  Result<int> CountAttempt(int64_t repo_id, const std::string& source);
  // Counts this run; past kMaxAttempts runs of `source` (a job that killed the process, so
  // a restart would die again) records the export as failed and returns true.
  Result<bool> RefuseRetry(int64_t repo_id, const std::string& source);
  // The configs and splits of the head's files and README (the outer Result: reading the
  // repo failed; the inner: the layout's error, recorded as the dataset's).
  Result<Result<DatasetLayout>> ReadLayout(Context& ctx);
  Result<void> RunSplit(Context& ctx, const ConfigLayout& config, const SplitLayout& split,
                        int ordinal);
  // Each shard into the blob store (or, for a native Parquet source, its LFS object as it
  // is), linked to the repo, and into the local cache; adds their bytes to `row`.
  Result<std::vector<db::ViewerFile>> StoreShards(Context& ctx, const ConfigLayout& config,
                                                  const SplitLayout& split,
                                                  const SplitExport& result, db::ViewerSplit& row);
  Result<std::string> CommitExport(Context& ctx);

  ExportDeps deps_;
  ExportOptions options_;
};

}  // namespace hangar::services::viewer

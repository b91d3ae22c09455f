#pragma once
// ViewerStore: the dataset viewer's state (issue 15, dataset-viewer.md §8): per dataset repo,
// the source commit whose Parquet export is being made or was made, and per split its
// progress, its figures or its error, and the Parquet files of the export with their row
// counts and row groups, so /rows seeks without reading a footer. Interface only;
// SqlViewerStore (db/sql/, on SQLite or PostgreSQL) implements it.
//
// One conversion at a time owns a repo's rows: BeginExport replaces them, and every later
// write names the source commit it was begun for and is dropped once another BeginExport
// superseded it, so a job that lost the race never overwrites the newer job's state.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::db {

// Where a dataset's or a split's conversion stands.
enum class ExportStatus : uint8_t {
  Pending,  // queued, not started (or started by a process that died: taken up again)
  Running,  // a job is converting it
  Ready,    // converted; its figures and files are final
  Failed,   // could not be converted: error_code and error say why
};

// A dataset repo's export (one row per repo).
struct ViewerExport {
  int64_t repo_id = 0;
  std::string source_commit;  // 40 hex: the commit of the default branch being exported
  ExportStatus status = ExportStatus::Pending;
  std::string export_commit;  // 40 hex of the refs/convert/parquet commit; "" before it
  bool viewer = true;         // false: README says `viewer: false`
  std::string language;       // the README's `language` when it names one ("fr"), else ""
  std::string error_code;     // dataset-level failure (ConfigNamesError, …); "" otherwise
  std::string error;
  int64_t updated_at = 0;  // unix seconds
};

// One split of one config, or a config that failed as a whole (split "" then).
struct ViewerSplit {
  std::string config;
  std::string split;
  int ordinal = 0;  // position in the dataset's config/split order (§4.2), from 0
  ExportStatus status = ExportStatus::Pending;
  std::string error_code;
  std::string error;
  std::string builder;                        // "csv", "json", "parquet", "text"
  bool partial = false;                       // the export stops at the size cap (§8.3)
  int64_t num_rows = 0;                       // rows in the export
  std::optional<int64_t> estimated_num_rows;  // of the whole source when partial
  int64_t num_columns = 0;
  int64_t num_bytes_original = 0;  // the source files
  int64_t num_bytes_parquet = 0;   // the export's files
  int64_t num_bytes_memory = 0;    // an estimate of the rows in memory
  std::string columns_json;        // [{"name":…,"type":<DuckDB type>}…] of the export
};

// One Parquet file of a split's export.
struct ViewerFile {
  int shard = 0;           // 0… in order; the file is <config>/<dir>/<shard:04>.parquet
  std::string path;        // its path on refs/convert/parquet
  Sha256 sha256;           // the LFS object holding it
  int64_t size = 0;        // bytes
  int64_t row_offset = 0;  // rows of the split before this file
  int64_t num_rows = 0;
  std::vector<int64_t> row_group_rows;  // rows of each row group, in order
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class ViewerStore {
 public:
  virtual ~ViewerStore() = default;

  // Starts the export of `source_commit`: the repo's export row becomes `{source_commit,
  // Pending, viewer, language}` and its splits exactly `splits` (their files none), in one
  // transaction. Errors: RepoNotFound when the repo row does not exist.
  virtual Result<void> BeginExport(int64_t repo_id, const std::string& source_commit, bool viewer,
                                   const std::vector<ViewerSplit>& splits,
                                   const std::string& language = "") = 0;
  // The repo's export row, or nullopt when none was begun.
  virtual Result<std::optional<ViewerExport>> GetExport(int64_t repo_id) = 0;
  // Sets the export's status, export commit and dataset-level error, when its source commit
  // is still `source_commit`. Returns false (and writes nothing) when superseded.
  virtual Result<bool> SetExportStatus(int64_t repo_id, const std::string& source_commit,
                                       ExportStatus status, const std::string& export_commit,
                                       const std::string& error_code, const std::string& error) = 0;
  // Replaces the row of (`split.config`, `split.split`) and, when `files` is given, that
  // split's files, in one transaction, when the source commit is still `source_commit`.
  // Returns false when superseded. Errors: NotFound when the split was not begun.
  virtual Result<bool> PutSplit(int64_t repo_id, const std::string& source_commit,
                                const ViewerSplit& split,
                                const std::optional<std::vector<ViewerFile>>& files) = 0;
  // The repo's splits in ordinal order (none when no export was begun).
  virtual Result<std::vector<ViewerSplit>> ListSplits(int64_t repo_id) = 0;
  // The files of one split in shard order.
  virtual Result<std::vector<ViewerFile>> ListFiles(int64_t repo_id, const std::string& config,
                                                    const std::string& split) = 0;
  // Repos whose export is Pending or Running: what a restarted process takes up again.
  virtual Result<std::vector<int64_t>> ListUnfinished() = 0;
  // Forgets the repo's export (its rows go with the repo row too).
  virtual Result<void> Delete(int64_t repo_id) = 0;
};

// "pending", "running", "ready", "failed"; and back (nullopt for another word).
std::string_view ExportStatusName(ExportStatus status);
std::optional<ExportStatus> ParseExportStatus(std::string_view name);

}  // namespace hangar::db

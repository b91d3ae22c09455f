#pragma once
// One split's Parquet export (dataset-viewer.md §8): its source files read by DuckDB
// (CSV/TSV, JSON and JSON Lines, text, Parquet; .gz and .zst too) and written as Parquet
// shards of small row groups, so /rows reads one row group of one small file. Parquet
// sources whose row groups already allow that are indexed as they are, not rewritten
// (§8.2). Blocking; runs on the export job's thread.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "duckdb/engine.h"
#include "services/viewer/dataset_layout.h"

namespace hangar::services::viewer {

// Bounds of an export. No defaults here: config.h's [viewer] section is their one source.
struct ExportLimits {
  uint64_t row_group_rows = 0;       // rows per written row group (DuckDB rounds to 2048s)
  uint64_t row_groups_per_file = 0;  // row groups per written shard
  // A split's export stops after the shard that reaches this many Parquet bytes: the rest
  // is left out and the split is partial (§8.3).
  uint64_t max_parquet_bytes = 0;
  // Source bytes read at most per split: whole files past it are not read at all (the
  // split is then partial and its row count estimated from the bytes read).
  uint64_t max_source_bytes = 0;
  // A Parquet source is indexed as it is when none of its row groups holds more rows than
  // this and it has at most native_max_row_groups of them; else it is rewritten.
  uint64_t native_max_row_group_rows = 0;
  uint64_t native_max_row_groups = 0;
  std::chrono::milliseconds timeout{0};  // per DuckDB statement
};

// A source file of the split, already on local disk under the engine's allowed directories.
struct SourceFile {
  std::string local_path;  // its name keeps the repo file's suffixes (".csv.gz")
  uint64_t size = 0;       // bytes
};

// One Parquet file of the export, on local disk.
struct Shard {
  std::string local_path;
  uint64_t size = 0;  // bytes
  int64_t num_rows = 0;
  std::vector<int64_t> row_group_rows;  // rows of each row group
  // Index into the sources when this shard is a Parquet source indexed as it is; the
  // export then links the source's LFS object instead of storing a new one.
  std::optional<size_t> native_source;
};

// The split's export: shards in row order, the columns as DuckDB reads them back.
struct SplitExport {
  std::vector<Shard> shards;
  std::vector<duckdb::Column> columns;
  int64_t num_rows = 0;
  bool partial = false;
  std::optional<int64_t> estimated_num_rows;  // when partial: the whole split's rows, estimated
  uint64_t source_bytes = 0;                  // of every source file of the split
};

// Reads `sources` (all of one split, in order) with the reader of `config.builder` and its
// params, writing shards into `out_dir` (an empty directory under the engine's allowed
// directories; the engine must allow writes). Errors: Unprocessable with the reader's
// message when the data cannot be read (malformed, mixed encodings, a cut Parquet file),
// or "EmptyDatasetError: …" when there are no rows or no columns; Unavailable on the deadline or
// memory limit; BadRequest for a builder parameter of the wrong type; Internal.
Result<SplitExport> ExportSplit(duckdb::Engine& engine, const ConfigLayout& config,
                                const std::vector<SourceFile>& sources, const std::string& out_dir,
                                const ExportLimits& limits);

// The rows of each row group of each Parquet file of `paths` (in their order), read in one
// query. Errors: as Engine::Run.
Result<std::vector<std::vector<int64_t>>> RowGroups(duckdb::Engine& engine,
                                                    const std::vector<std::string>& paths);

}  // namespace hangar::services::viewer

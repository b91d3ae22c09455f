// One split's Parquet export (parquet_export.h). DuckDB does the reading and the writing:
// one COPY per split from its reader into a directory of shards, each of
// row_groups_per_file row groups of row_group_rows rows, written in row order (DuckDB keeps
// insertion order by default, and ROW_GROUPS_PER_FILE starts a new file when one is full).

#include "services/viewer/parquet_export.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "core/log.h"
#include "services/viewer/json_depth.h"

namespace hangar::services::viewer {
namespace fs = std::filesystem;
using duckdb::Param;
using duckdb::Query;
using duckdb::StringList;

namespace {

// Longest CSV line read (a 50 MB cell fits; DuckDB's default is 2 MB). The reader's buffer
// is set to the same: by default it is 16 lines' worth, a gigabyte at this bound, past the
// engine's memory limit.
constexpr int64_t kMaxRecordBytes = 64ll << 20;
// The JSON reader holds two buffers of this size per file it reads at once: 32 MB keeps
// two threads' worth at 128 MB.
constexpr int64_t kMaxJsonObjectBytes = 32ll << 20;

// The builder parameter `key` (or `alias`) of the config as a string, or `fallback`.
Result<std::string> StringParam(const ConfigLayout& c, std::string_view key, std::string_view alias,
                                std::string_view fallback) {
  for (std::string_view k : {key, alias}) {
    if (k.empty()) continue;
    if (const auto* v = c.params.if_contains(k)) {
      if (!v->is_string())
        return MakeError(ErrorCode::BadRequest, "builder parameter '" + std::string(k) +
                                                    "' of config '" + c.name +
                                                    "' must be a string");
      return std::string(v->as_string());
    }
  }
  return std::string(fallback);
}

// The CSV reader of a config: delimiter (sep/delimiter), header (pandas' `header=None`
// means no header row), quotechar, skiprows, encoding.
Result<Query> CsvCopy(const ConfigLayout& c, StringList files, std::string out,
                      const ExportLimits& l) {
  HANGAR_ASSIGN_OR_RETURN(std::string delim, StringParam(c, "sep", "delimiter", ","));
  HANGAR_ASSIGN_OR_RETURN(std::string quote, StringParam(c, "quotechar", "", "\""));
  HANGAR_ASSIGN_OR_RETURN(std::string encoding, StringParam(c, "encoding", "", "utf-8"));
  if (delim.empty() || delim.size() > 4)
    return MakeError(ErrorCode::BadRequest,
                     "the separator of config '" + c.name + "' must be 1 to 4 bytes");
  bool header = true;
  // pandas' header=None (YAML null) or false: the first line is data.
  if (const auto* h = c.params.if_contains("header"))
    header = !h->is_null() && !(h->is_bool() && !h->as_bool());
  int64_t skip = 0;
  if (const auto* s = c.params.if_contains("skiprows"); s && s->is_int64()) skip = s->as_int64();
  if (skip < 0) skip = 0;
  // `skip` only when asked for: an explicit skip = 0 stops DuckDB's sniffer from taking a
  // file with ragged rows. It is the last parameter, so the others keep their numbers.
  duckdb::SqlText sql(
      "COPY (SELECT * FROM read_csv($1, delim = $2, header = $3, quote = $4, encoding = $5, "
      "max_line_size = $6, buffer_size = $6, null_padding = true, union_by_name = true");
  std::vector<Param> params{std::move(files),
                            delim,
                            header,
                            quote,
                            encoding,
                            kMaxRecordBytes,
                            std::move(out),
                            l.row_group_rows,
                            l.row_groups_per_file};
  if (skip > 0) {
    sql += ", skip = $10";
    params.emplace_back(skip);
  }
  sql += ")) TO $7 (FORMAT parquet, ROW_GROUP_SIZE $8, ROW_GROUPS_PER_FILE $9)";
  return Query(std::move(sql), std::move(params));
}

Query JsonCopy(StringList files, std::string out, const ExportLimits& l) {
  return Query(
      "COPY (SELECT * FROM read_json($1, format = 'auto', union_by_name = true, "
      "maximum_object_size = $2)) TO $3 (FORMAT parquet, ROW_GROUP_SIZE $4, "
      "ROW_GROUPS_PER_FILE $5)",
      {std::move(files), kMaxJsonObjectBytes, std::move(out), l.row_group_rows,
       l.row_groups_per_file});
}

// Text: one row per line in a column `text`. The delimiter is four control bytes no text
// file holds, so a line is never split; no quoting.
Query TextCopy(StringList files, std::string out, const ExportLimits& l) {
  return Query(
      "COPY (SELECT * FROM read_csv($1, columns = {'text': 'VARCHAR'}, header = false, "
      "delim = E'\\x1f\\x1e\\x1d\\x1c', quote = '', escape = '', max_line_size = $2, "
      "buffer_size = $2)) "
      "TO $3 (FORMAT parquet, ROW_GROUP_SIZE $4, ROW_GROUPS_PER_FILE $5)",
      {std::move(files), kMaxRecordBytes, std::move(out), l.row_group_rows, l.row_groups_per_file});
}

Query ParquetCopy(StringList files, std::string out, const ExportLimits& l) {
  return Query(
      "COPY (SELECT * FROM read_parquet($1, union_by_name = true)) TO $2 "
      "(FORMAT parquet, ROW_GROUP_SIZE $3, ROW_GROUPS_PER_FILE $4)",
      {std::move(files), std::move(out), l.row_group_rows, l.row_groups_per_file});
}

Result<std::vector<duckdb::Column>> ColumnsOf(duckdb::Engine& engine, const std::string& path,
                                              std::chrono::milliseconds timeout) {
  Query q("SELECT * FROM read_parquet($1) LIMIT 0", {path});
  q.timeout = timeout;
  HANGAR_ASSIGN_OR_RETURN(auto result, engine.Run(q));
  return std::move(result.columns);
}

bool SameColumns(const std::vector<duckdb::Column>& a, const std::vector<duckdb::Column>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.name == y.name && x.sql_type == y.sql_type;
  });
}

// Parquet sources indexed as they are, when every file has small row groups, not too many
// of them, and one schema (§8.2); nullopt when they must be rewritten.
Result<std::optional<SplitExport>> IndexNative(duckdb::Engine& engine,
                                               const std::vector<SourceFile>& sources,
                                               const ExportLimits& l) {
  SplitExport out;
  std::vector<std::string> paths;
  for (const auto& s : sources) paths.push_back(s.local_path);
  HANGAR_ASSIGN_OR_RETURN(auto all_groups, RowGroups(engine, paths));
  for (size_t i = 0; i < sources.size(); ++i) {
    auto& groups = all_groups[i];
    bool small = groups.size() <= l.native_max_row_groups &&
                 std::all_of(groups.begin(), groups.end(), [&](int64_t n) {
                   return static_cast<uint64_t>(n) <= l.native_max_row_group_rows;
                 });
    if (!small) return std::nullopt;
    HANGAR_ASSIGN_OR_RETURN(auto columns, ColumnsOf(engine, sources[i].local_path, l.timeout));
    if (i == 0) out.columns = columns;
    if (!SameColumns(columns, out.columns)) return std::nullopt;
    Shard shard{sources[i].local_path, sources[i].size, 0, std::move(groups), i};
    for (int64_t n : shard.row_group_rows) shard.num_rows += n;
    out.num_rows += shard.num_rows;
    out.shards.push_back(std::move(shard));
  }
  return std::optional<SplitExport>(std::move(out));
}

// DuckDB's shard names, data_<n>.parquet, in n order.
std::vector<fs::path> WrittenShards(const std::string& dir) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with("data_") || !name.ends_with(".parquet")) continue;
    found.emplace_back(std::strtol(name.c_str() + 5, nullptr, 10), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(std::move(p));
  return out;
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> RowGroups(duckdb::Engine& engine,
                                                    const std::vector<std::string>& paths) {
  std::vector<std::vector<int64_t>> out(paths.size());
  if (paths.empty()) return out;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < paths.size(); ++i) index.emplace(paths[i], i);
  // One query for all the files (a query a file cost 538 ms for 306 shards, this 137 ms).
  Query q(
      "SELECT file_name, row_group_num_rows FROM parquet_metadata($1) WHERE column_id = 0 "
      "ORDER BY file_name, row_group_id",
      {StringList{paths}});
  HANGAR_ASSIGN_OR_RETURN(auto result, engine.Run(q));
  for (const auto& row : result.rows) {
    const auto* name = std::get_if<std::string>(&row[0]);
    auto it = name ? index.find(*name) : index.end();
    if (it == index.end())
      return MakeError(ErrorCode::Internal, "parquet_metadata named a file it was not given");
    const auto* n = std::get_if<int64_t>(&row[1]);
    out[it->second].push_back(n ? *n : 0);
  }
  return out;
}

namespace {

// The COPY that converts `files` with the config's builder into shards under `out_dir`.
Result<Query> CopyQuery(const ConfigLayout& config, StringList files, const std::string& out_dir,
                        const ExportLimits& limits) {
  switch (config.builder) {
    case Builder::Csv:
      return CsvCopy(config, std::move(files), out_dir, limits);
    case Builder::Json:
      return JsonCopy(std::move(files), out_dir, limits);
    case Builder::Text:
      return TextCopy(std::move(files), out_dir, limits);
    case Builder::Parquet:
      return ParquetCopy(std::move(files), out_dir, limits);
    case Builder::Unsupported:
      break;
  }
  return MakeError(ErrorCode::Unprocessable,
                   "files of type " + config.extension + " cannot be shown by the viewer yet");
}

}  // namespace

Result<SplitExport> ExportSplit(duckdb::Engine& engine, const ConfigLayout& config,
                                const std::vector<SourceFile>& sources, const std::string& out_dir,
                                const ExportLimits& limits) {
  uint64_t all_bytes = 0, read_bytes = 0;
  StringList files;
  for (const auto& s : sources) {
    all_bytes += s.size;
    // Whole files up to the source cap, the first always.
    if (files.items.empty() || read_bytes + s.size <= limits.max_source_bytes) {
      files.items.push_back(s.local_path);
      read_bytes += s.size;
    }
  }
  if (files.items.empty())
    return MakeError(ErrorCode::Unprocessable, "EmptyDatasetError: the split has no data files");

  if (config.builder == Builder::Parquet && files.items.size() == sources.size()) {
    HANGAR_ASSIGN_OR_RETURN(auto native, IndexNative(engine, sources, limits));
    if (native) {
      native->source_bytes = all_bytes;
      return std::move(*native);
    }
  }

  if (config.builder == Builder::Json)
    for (const auto& f : files.items) HANGAR_TRY(CheckJsonDepth(f, f));
  HANGAR_ASSIGN_OR_RETURN(auto copy, CopyQuery(config, std::move(files), out_dir, limits));
  copy.timeout = limits.timeout;
  HANGAR_TRY(engine.Run(copy));

  SplitExport out;
  out.source_bytes = all_bytes;
  int64_t written_rows = 0;
  uint64_t parquet_bytes = 0;
  std::error_code ec;
  std::vector<std::string> written;
  for (const fs::path& path : WrittenShards(out_dir)) written.push_back(path.string());
  HANGAR_ASSIGN_OR_RETURN(auto all_groups, RowGroups(engine, written));
  for (size_t i = 0; i < written.size(); ++i) {
    const std::string& path = written[i];
    Shard shard{path, static_cast<uint64_t>(fs::file_size(path, ec)), 0, std::move(all_groups[i]),
                std::nullopt};
    for (int64_t n : shard.row_group_rows) shard.num_rows += n;
    written_rows += shard.num_rows;
    if (parquet_bytes >= limits.max_parquet_bytes && !out.shards.empty()) {
      out.partial = true;  // past the cap: counted, then dropped
      fs::remove(path, ec);
      continue;
    }
    parquet_bytes += shard.size;
    out.num_rows += shard.num_rows;
    out.shards.push_back(std::move(shard));
  }
  if (out.num_rows == 0)
    return MakeError(ErrorCode::Unprocessable, "EmptyDatasetError: the split has no rows");
  HANGAR_ASSIGN_OR_RETURN(out.columns, ColumnsOf(engine, out.shards[0].local_path, limits.timeout));
  if (out.columns.empty())
    return MakeError(ErrorCode::Unprocessable, "EmptyDatasetError: the split has no columns");
  if (read_bytes < all_bytes) {
    out.partial = true;
    // Rows of the files not read, estimated at the rows per byte of those read.
    written_rows =
        static_cast<int64_t>(static_cast<double>(written_rows) * static_cast<double>(all_bytes) /
                             static_cast<double>(std::max<uint64_t>(read_bytes, 1)));
  }
  if (out.partial) out.estimated_num_rows = written_rows;
  return out;
}

}  // namespace hangar::services::viewer

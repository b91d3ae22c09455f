// ViewerService: the rows of a split (viewer_service.h), read from its Parquet shards by
// the row counts the export recorded, and their cells as the viewer's JSON (§5).

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>

#include "services/viewer/features.h"
#include "services/viewer/shard_files.h"
#include "services/viewer/viewer_internal.h"

namespace hangar::services::viewer {
namespace json = boost::json;

namespace {

using duckdb::Sql;

// /first-rows (§4.3): at most this many rows, columns and bytes of cells.
constexpr int64_t kFirstRows = 100;
constexpr size_t kFirstRowsMinNumber = 10;
constexpr size_t kFirstRowsMaxBytes = 1'000'000;
constexpr size_t kMinCellBytes = 100;
constexpr size_t kMaxColumns = 1000;
// Threads that read the files of a page of ranked rows (ReadRowsAt) at once.
constexpr size_t kReadRowsThreads = 4;

// Why reading rows failed, in the viewer's words.
Error RowsError(const Error& e) {
  if (e.code == ErrorCode::PayloadTooLarge)
    return MakeError(ErrorCode::TooBigContentError,
                     "The rows are too big to be served: ask for fewer rows.");
  return MakeError(
      e.code == ErrorCode::Unavailable ? ErrorCode::Unavailable : ErrorCode::UnexpectedError,
      "The rows could not be read: " + e.message);
}

// One cell as JSON: NaN and infinities null, bytes null ("not supported"), nested values
// (the engine's JSON text) as JSON, everything else as itself.
json::value CellJson(const duckdb::Value& v, const duckdb::Column& column) {
  return std::visit(
      [&](const auto& x) -> json::value {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, duckdb::Blob>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::isfinite(x) ? json::value(x) : json::value(nullptr);
        } else if constexpr (std::is_same_v<T, std::string>) {
          bool nested = column.type == duckdb::ColumnType::List ||
                        column.type == duckdb::ColumnType::Struct ||
                        column.type == duckdb::ColumnType::Map ||
                        column.type == duckdb::ColumnType::Integer ||  // past int64: digits
                        column.sql_type == "JSON";  // read_json's mixed-type columns
          if (nested) {
            boost::system::error_code ec;
            json::value parsed = json::parse(x, ec);
            if (!ec) return parsed;
          }
          return json::value(x);
        } else {
          return json::value(x);
        }
      },
      v);
}

// `text` cut to at most `n` bytes, not inside a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

size_t CellBytes(const json::object& row) {
  size_t n = 0;
  for (const auto& kv : row.at("row").as_object()) n += json::serialize(kv.value()).size();
  return n;
}

// The first-rows budget (§4.3): drop rows from the end down to kFirstRowsMinNumber, then
// cut cells over kMinCellBytes from the last row backwards, until the cells fit.
bool FitFirstRows(json::array& rows) {
  std::vector<size_t> sizes;
  size_t total = 0;
  for (const auto& r : rows) total += sizes.emplace_back(CellBytes(r.as_object()));
  bool truncated = false;
  while (total > kFirstRowsMaxBytes && rows.size() > kFirstRowsMinNumber) {
    total -= sizes.back();
    sizes.pop_back();
    rows.pop_back();
    truncated = true;
  }
  for (size_t i = rows.size(); i-- > 0 && total > kFirstRowsMaxBytes;) {
    auto& row = rows[i].as_object();
    auto& cells = row["row"].as_object();
    auto& cut = row["truncated_cells"].as_array();
    for (auto& kv : cells) {
      std::string text = json::serialize(kv.value());
      if (text.size() <= kMinCellBytes) continue;
      kv.value() = CutUtf8(text, kMinCellBytes);
      cut.push_back(json::string(kv.key()));
      truncated = true;
    }
    total -= sizes[i];
    total += sizes[i] = CellBytes(row);
  }
  return truncated;
}

}  // namespace

json::object RowJson(int64_t row_idx, const std::vector<duckdb::Value>& cells,
                     const std::vector<duckdb::Column>& columns) {
  json::object row;
  for (size_t c = 0; c < columns.size() && c < cells.size(); ++c)
    row[columns[c].name] = CellJson(cells[c], columns[c]);
  return json::object{
      {"row_idx", row_idx}, {"row", std::move(row)}, {"truncated_cells", json::array()}};
}

json::object ViewerService::RowsPage(const Split& split, Matches matches) const {
  return json::object{{"features", FeatureList(*split.columns)},
                      {"rows", std::move(matches.rows)},
                      {"num_rows_total", matches.total},
                      {"num_rows_per_page", kFirstRows},
                      {"partial", split.row->partial}};
}

Result<std::string> ViewerService::LocalPath(const db::ViewerFile& file) {
  return FetchShard(deps_.blobs, options_.cache_dir, file.sha256);
}

Result<json::array> ViewerService::ReadRows(const Split& split, int64_t offset, int64_t length,
                                            int64_t max_cell_chars) {
  // With a cap, a text column is read cut to it (its cell is cut again by the budget
  // anyway) and bytes not at all (they are null in the answer): a 50 MB cell stays a cell.
  duckdb::SqlText select("SELECT *");
  if (max_cell_chars > 0) {
    select = duckdb::SqlText("SELECT ");
    for (size_t c = 0; c < split.columns->size(); ++c) {
      const auto& column = (*split.columns)[c];
      auto name = duckdb::Identifier::Quote(column.name);
      if (c) select += ", ";
      if (column.type == duckdb::ColumnType::String) {
        select += "left(";
        select += name;
        select += ", ?) AS ";
      } else if (column.type == duckdb::ColumnType::Blob) {
        select += "NULL::BLOB AS ";
      }
      select += name;
    }
  }
  select += " FROM read_parquet(?) WHERE file_row_number >= ? AND file_row_number < ?";
  json::array out;
  const auto& files = *split.files;
  // The first file holding row `offset`: files are in row order, each from row_offset.
  auto it = std::upper_bound(files.begin(), files.end(), offset,
                             [](int64_t o, const db::ViewerFile& f) { return o < f.row_offset; });
  if (it != files.begin()) --it;
  for (; it != files.end() && length > 0; ++it) {
    int64_t local = offset - it->row_offset;
    if (local >= it->num_rows) continue;
    int64_t count = std::min(length, it->num_rows - local);
    HANGAR_ASSIGN_OR_RETURN(std::string path, LocalPath(*it));
    // No ORDER BY: one file's rows come in its order (DuckDB keeps insertion order), and a
    // sort would cost a third of the query.
    std::vector<duckdb::Param> params;
    if (max_cell_chars > 0)
      for (const auto& column : *split.columns)
        if (column.type == duckdb::ColumnType::String) params.emplace_back(max_cell_chars);
    params.insert(params.end(), {path, local, local + count});
    duckdb::Query q(select, std::move(params));
    q.timeout = options_.query_timeout;
    q.max_result_bytes = options_.max_result_bytes;
    auto result = deps_.rows_engine.Run(q);
    if (!result) return RowsError(result.error());
    for (size_t r = 0; r < result->rows.size(); ++r)
      out.push_back(RowJson(offset + static_cast<int64_t>(r), result->rows[r], result->columns));
    offset += count;
    length -= count;
  }
  return out;
}

Result<json::array> ViewerService::ReadRowsAt(const Split& split,
                                              const std::vector<uint64_t>& rows) {
  const auto& files = *split.files;
  // The rows of each file, read with one query a file: the row groups between the file's
  // first and last row asked for, the others skipped by their row numbers.
  std::map<size_t, std::vector<int64_t>> by_file;
  for (uint64_t row : rows) {
    auto it = std::upper_bound(files.begin(), files.end(), int64_t(row),
                               [](int64_t r, const db::ViewerFile& f) { return r < f.row_offset; });
    if (it == files.begin()) continue;
    --it;
    int64_t local = int64_t(row) - it->row_offset;
    if (local < it->num_rows) by_file[size_t(it - files.begin())].push_back(local);
  }
  using Found = std::vector<std::pair<uint64_t, json::object>>;
  auto read_file = [&](size_t file, std::vector<int64_t>& locals, Found& found) -> Result<void> {
    std::sort(locals.begin(), locals.end());
    duckdb::StringList wanted;
    for (int64_t l : locals) wanted.items.push_back(std::to_string(l));
    HANGAR_ASSIGN_OR_RETURN(std::string path, LocalPath(files[file]));
    duckdb::Query q(Sql("SELECT file_row_number, * EXCLUDE (file_row_number) FROM "
                        "read_parquet(?, file_row_number = true) WHERE file_row_number BETWEEN ? "
                        "AND ? AND list_contains(?::BIGINT[], file_row_number)"),
                    {path, locals.front(), locals.back(), std::move(wanted)});
    q.timeout = options_.query_timeout;
    q.max_result_bytes = options_.max_result_bytes;
    auto result = deps_.rows_engine.Run(q);
    if (!result) return RowsError(result.error());
    std::vector<duckdb::Column> columns(result->columns.begin() + 1, result->columns.end());
    for (auto& cells : result->rows) {
      int64_t idx = files[file].row_offset + std::get<int64_t>(cells.front());
      cells.erase(cells.begin());
      found.emplace_back(uint64_t(idx), RowJson(idx, cells, columns));
    }
    return {};
  };
  // Ranked rows lie all over the split: the files are read by a few threads at once, each
  // on a connection of the point reader, rather than one after another.
  std::vector<std::pair<size_t, std::vector<int64_t>>> groups(by_file.begin(), by_file.end());
  size_t workers = std::min<size_t>(groups.size(), kReadRowsThreads);
  std::vector<Found> found(std::max<size_t>(workers, 1));
  std::vector<Result<void>> done(found.size());
  auto work = [&](size_t w) {
    for (size_t g = w; g < groups.size() && done[w]; g += workers)
      done[w] = read_file(groups[g].first, groups[g].second, found[w]);
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
  if (workers > 0) work(0);
  for (auto& t : threads) t.join();
  for (auto& d : done) HANGAR_TRY(d);
  std::map<uint64_t, json::object> by_row;
  for (auto& f : found)
    for (auto& [row, obj] : f) by_row.emplace(row, std::move(obj));
  json::array out;
  for (uint64_t row : rows)
    if (auto it = by_row.find(row); it != by_row.end()) out.push_back(std::move(it->second));
  return out;
}

Result<ViewerAnswer> ViewerService::FirstRows(const Principal& who, const RepoId& id,
                                              const std::string& config, const std::string& split) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  if (s.columns->size() > kMaxColumns)
    return MakeError(ErrorCode::TooManyColumnsError,
                     "The number of columns (" + std::to_string(s.columns->size()) +
                         ") exceeds the maximum supported number of columns (1000).");
  HANGAR_ASSIGN_OR_RETURN(json::array rows,
                          ReadRows(s, 0, kFirstRows, int64_t(kFirstRowsMaxBytes) + 1));
  bool truncated = FitFirstRows(rows);
  json::object out{
      {"dataset", id.ns + "/" + id.name},    {"config", config},        {"split", split},
      {"features", FeatureList(*s.columns)}, {"rows", std::move(rows)}, {"truncated", truncated}};
  return ViewerAnswer{std::move(out), s.state->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Rows(const Principal& who, const RepoId& id,
                                         const std::string& config, const std::string& split,
                                         int64_t offset, int64_t length) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  HANGAR_ASSIGN_OR_RETURN(json::array rows, ReadRows(s, offset, length));
  return ViewerAnswer{RowsPage(s, Matches{std::move(rows), s.row->num_rows}),
                      s.state->export_row.source_commit};
}

}  // namespace hangar::services::viewer

// ViewerService: /search, /filter and /statistics (viewer_service.h; dataset-viewer.md
// §4.5, §4.6, §4.10), each a query over all the shards of one split. A row's index in the
// split is its file's row_offset plus its row number in the file, computed in the query
// from two bound lists (the files and their offsets), so results keep the split's row
// numbers whatever the order or the filter.

#include <algorithm>

#include "services/viewer/features.h"
#include "services/viewer/filter_expr.h"
#include "services/viewer/statistics.h"
#include "services/viewer/viewer_internal.h"

namespace hangar::services::viewer {
namespace json = boost::json;

namespace {

using duckdb::Identifier;
using duckdb::Param;
using duckdb::Sql;
using duckdb::SqlText;
using duckdb::StringList;

// The hidden columns a query adds: the row's file and its index in the split. Chosen so
// no dataset's own column is likely to clash; a clash is refused (ColumnsClash).
constexpr std::string_view kFileColumn = "__hangar_file";
constexpr std::string_view kRowIdxColumn = "__hangar_row_idx";
// A /search query: at most this many words, each at most this many bytes.
constexpr size_t kMaxSearchTerms = 16;
constexpr size_t kMaxSearchTermBytes = 256;

bool ColumnsClash(const std::vector<duckdb::Column>& columns) {
  return std::any_of(columns.begin(), columns.end(), [](const duckdb::Column& c) {
    return c.name == kFileColumn || c.name == kRowIdxColumn;
  });
}

// The words of a search query (split on blanks).
std::vector<std::string> Words(std::string_view query) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && (query[i] == ' ' || query[i] == '\t')) ++i;
    size_t start = i;
    while (i < query.size() && query[i] != ' ' && query[i] != '\t') ++i;
    if (i > start) out.emplace_back(query.substr(start, i - start));
  }
  return out;
}

// Why a query of a client's condition failed, in the viewer's words (§4.6 rule 4).
Error QueryError(const Error& e) {
  switch (e.code) {
    case ErrorCode::Unprocessable:
      return MakeError(ErrorCode::InvalidParameter, "A query parameter is invalid");
    case ErrorCode::PayloadTooLarge:
      return MakeError(ErrorCode::TooBigContentError,
                       "The rows are too big to be served: ask for fewer rows.");
    case ErrorCode::Unavailable:
      return MakeError(ErrorCode::Unavailable,
                       "The query took too long or needed too much memory: narrow it.");
    default:
      return MakeError(ErrorCode::UnexpectedError, "The rows could not be read.");
  }
}

}  // namespace

Result<ViewerService::Matches> ViewerService::QueryRows(const Split& split,
                                                        const FilterClause* where,
                                                        const FilterClause* order, int64_t offset,
                                                        int64_t length) {
  if (ColumnsClash(*split.columns))
    return MakeError(ErrorCode::UnexpectedError,
                     "The split has a column named like the viewer's own; it cannot be queried.");
  StringList paths, offsets;  // the offsets as text: a VARCHAR[] cast to BIGINT[]
  for (const auto& f : *split.files) {
    HANGAR_ASSIGN_OR_RETURN(std::string path, LocalPath(f));
    paths.items.push_back(std::move(path));
    offsets.items.push_back(std::to_string(f.row_offset));
  }
  SqlText sql("SELECT (?::BIGINT[])[list_position(?, ");
  sql += Identifier::Quote(kFileColumn);
  sql += ")] + file_row_number AS ";
  sql += Identifier::Quote(kRowIdxColumn);
  sql += ", * EXCLUDE (";
  sql += Identifier::Quote(kFileColumn);
  sql += ", file_row_number) FROM read_parquet(?, filename = ?, file_row_number = true)";
  std::vector<Param> bound{offsets, paths, paths, std::string(kFileColumn)};
  SqlText count("SELECT count(*) FROM read_parquet(?) WHERE ");
  std::vector<Param> count_bound{paths};
  if (where) {
    sql += " WHERE ";
    sql += where->sql;
    count += where->sql;
    bound.insert(bound.end(), where->params.begin(), where->params.end());
    count_bound.insert(count_bound.end(), where->params.begin(), where->params.end());
  }
  // Without an order the rows come in the files' order (DuckDB keeps insertion order), so
  // a page stops reading once it has its rows; with one, the row index breaks ties.
  if (order) {
    sql += " ORDER BY ";
    sql += order->sql;
    sql += ", 1";
    bound.insert(bound.end(), order->params.begin(), order->params.end());
  }
  sql += " LIMIT ? OFFSET ?";
  bound.push_back(length);
  bound.push_back(offset);
  duckdb::Query q(std::move(sql), std::move(bound));
  q.timeout = options_.query_timeout;
  q.max_result_bytes = options_.max_result_bytes;
  auto result = deps_.engine.Run(q);
  if (!result) return QueryError(result.error());
  Matches out;
  out.total = split.row->num_rows;
  if (where) {
    duckdb::Query c(std::move(count), std::move(count_bound));
    c.timeout = options_.query_timeout;
    auto counted = deps_.engine.Run(c);
    if (!counted) return QueryError(counted.error());
    out.total = std::get<int64_t>(counted->rows.at(0).at(0));
  }
  std::vector<duckdb::Column> columns(result->columns.begin() + 1, result->columns.end());
  for (auto& row : result->rows) {
    int64_t idx = std::get<int64_t>(row.front());
    row.erase(row.begin());
    out.rows.push_back(RowJson(idx, row, columns));
  }
  return out;
}

Result<ViewerAnswer> ViewerService::Search(const Principal& who, const RepoId& id,
                                           const std::string& config, const std::string& split,
                                           const std::string& query, int64_t offset,
                                           int64_t length) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  std::vector<Identifier> text_columns;
  for (const auto& c : *s.columns)
    if (IsIndexable(FeatureOf(c.sql_type))) text_columns.push_back(Identifier::Quote(c.name));
  if (text_columns.empty())
    return MakeError(ErrorCode::SearchFeatureNotAvailableError,
                     "The split has no string column to search.");
  auto words = Words(query);
  if (words.empty())
    return MakeError(ErrorCode::MissingRequiredParameter, "Parameter 'query' is required");
  if (words.size() > kMaxSearchTerms)
    return MakeError(ErrorCode::InvalidParameter, "Parameter 'query' has too many words");
  // Every word, in any string column (nested ones as their JSON text), case-insensitively.
  FilterClause where;
  for (size_t w = 0; w < words.size(); ++w) {
    if (words[w].size() > kMaxSearchTermBytes)
      return MakeError(ErrorCode::InvalidParameter, "Parameter 'query' has too long a word");
    // contains(lower(…)) scans 2.3 times faster than ILIKE '%…%' (bench/viewer_bench.sh).
    where.sql += w ? Sql(" AND (") : Sql("(");
    for (size_t c = 0; c < text_columns.size(); ++c) {
      where.sql += c ? Sql(" OR contains(lower(CAST(") : Sql("contains(lower(CAST(");
      where.sql += text_columns[c];
      where.sql += " AS VARCHAR)), lower(?))";
      where.params.emplace_back(words[w]);
    }
    where.sql += ")";
  }
  HANGAR_ASSIGN_OR_RETURN(Matches m, QueryRows(s, &where, nullptr, offset, length));
  return ViewerAnswer{RowsPage(s, std::move(m)), s.state->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Filter(const Principal& who, const RepoId& id,
                                           const std::string& config, const std::string& split,
                                           const std::string& where, const std::string& orderby,
                                           int64_t offset, int64_t length) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  std::optional<FilterClause> condition, order;
  if (!where.empty()) {
    HANGAR_ASSIGN_OR_RETURN(condition, ParseWhere(where, *s.columns));
  }
  if (!orderby.empty()) {
    HANGAR_ASSIGN_OR_RETURN(order, ParseOrderBy(orderby, *s.columns));
  }
  HANGAR_ASSIGN_OR_RETURN(Matches m, QueryRows(s, condition ? &*condition : nullptr,
                                               order ? &*order : nullptr, offset, length));
  return ViewerAnswer{RowsPage(s, std::move(m)), s.state->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Statistics(const Principal& who, const RepoId& id,
                                               const std::string& config,
                                               const std::string& split) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  std::string key = std::to_string(s.state->export_row.repo_id) + '\n' +
                    s.state->export_row.source_commit + '\n' + config + '\n' + split;
  if (auto hit = statistics_.Get(key))
    return ViewerAnswer{**hit, s.state->export_row.source_commit};
  // One computation per split at a time: the others are told to come back, rather than
  // each reading the whole split again on a worker of its own.
  {
    std::lock_guard lock(statistics_mu_);
    if (!statistics_running_.insert(key).second)
      return MakeError(ErrorCode::ResponseNotReady,
                       "The statistics are being computed. Please retry later.");
  }
  struct Done {
    ViewerService* self;
    const std::string& key;
    ~Done() {
      std::lock_guard lock(self->statistics_mu_);
      self->statistics_running_.erase(key);
    }
  } done{this, key};
  std::vector<std::string> paths;
  for (const auto& f : *s.files) {
    HANGAR_ASSIGN_OR_RETURN(std::string path, LocalPath(f));
    paths.push_back(std::move(path));
  }
  StatisticsOptions options;
  options.timeout = options_.statistics_timeout;
  auto body = ComputeStatistics(deps_.engine, paths, *s.columns, s.row->partial, options);
  if (!body) {
    if (body.error().code == ErrorCode::Unavailable)
      return MakeError(ErrorCode::ResponseNotReady,
                       "The statistics took too long to compute. Please retry later.");
    return MakeError(ErrorCode::UnexpectedError,
                     "The statistics could not be computed: " + body.error().message);
  }
  auto shared = std::make_shared<const json::object>(std::move(*body));
  statistics_.Put(key, shared);
  return ViewerAnswer{*shared, s.state->export_row.source_commit};
}

}  // namespace hangar::services::viewer

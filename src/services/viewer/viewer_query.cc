// ViewerService: /search, /filter and /statistics (viewer_service.h; dataset-viewer.md
// §4.5, §4.6, §4.10), each a query over all the shards of one split. A row's index in the
// split is its file's row_offset plus its row number in the file, computed in the query
// from two bound lists (the files and their offsets), so results keep the split's row
// numbers whatever the order or the filter.

#include <algorithm>

#include "services/viewer/features.h"
#include "services/viewer/filter_expr.h"
#include "services/viewer/statistics.h"
#include "services/viewer/text_terms.h"
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
// A /search query: at most this many bytes and terms.
constexpr size_t kMaxSearchBytes = 4096;
constexpr size_t kMaxSearchTerms = 16;

bool ColumnsClash(const std::vector<duckdb::Column>& columns) {
  return std::any_of(columns.begin(), columns.end(), [](const duckdb::Column& c) {
    return c.name == kFileColumn || c.name == kRowIdxColumn;
  });
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

SearchIndexSpec ViewerService::SearchSpec(const Split& split) const {
  SearchIndexSpec spec;
  for (const auto& c : *split.columns)
    if (IsIndexable(FeatureOf(c.sql_type))) spec.columns.push_back(c.name);
  for (const auto& f : *split.files)
    spec.files.push_back(
        {f.sha256, uint64_t(f.row_offset), uint64_t(f.num_rows), uint64_t(f.size)});
  spec.language = split.state->export_row.language;  // "" or one libstemmer lacks: Porter
  spec.owner =
      SearchIndexOwner(split.state->export_row.repo_id, split.row->config, split.row->split);
  spec.key = SearchIndexKey(spec);
  return spec;
}

Result<ViewerAnswer> ViewerService::Search(const Principal& who, const RepoId& id,
                                           const std::string& config, const std::string& split,
                                           const std::string& query, int64_t offset,
                                           int64_t length) {
  HANGAR_ASSIGN_OR_RETURN(Split s, FindSplit(who, id, config, split));
  SearchIndexSpec spec = SearchSpec(s);
  if (spec.columns.empty())
    return MakeError(ErrorCode::SearchFeatureNotAvailableError,
                     "The split has no string column to search.");
  if (query.empty())
    return MakeError(ErrorCode::MissingRequiredParameter, "Parameter 'query' is required");
  if (query.size() > kMaxSearchBytes)
    return MakeError(ErrorCode::InvalidParameter, "Parameter 'query' is too long");
  // A query of no term (blanks, punctuation) matches no row.
  std::vector<std::string> terms;
  TermCutter(spec.language).Cut(query, terms);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  if (terms.size() > kMaxSearchTerms)
    return MakeError(ErrorCode::InvalidParameter, "Parameter 'query' has too many words");
  if (!search_) return MakeError(ErrorCode::ResponseNotReady, "The search index is not available.");
  HANGAR_ASSIGN_OR_RETURN(auto index, search_->Get(spec));
  auto ranked = RankBm25(*index, std::move(terms), uint64_t(offset), uint64_t(length));
  if (!ranked) {  // a damaged index: built again
    search_->Discard(spec);
    return MakeError(ErrorCode::ResponseNotReady,
                     "The search index is being rebuilt. Please retry later.");
  }
  HANGAR_ASSIGN_OR_RETURN(json::array rows, ReadRowsAt(s, ranked->rows));
  return ViewerAnswer{RowsPage(s, Matches{std::move(rows), int64_t(ranked->total)}),
                      s.state->export_row.source_commit};
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

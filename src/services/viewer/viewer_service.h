#pragma once
// ViewerService: the dataset viewer's answers (dataset-viewer.md §4, issue 15): which
// splits a dataset has and how far their export got, their rows read from the Parquet
// export by row-group metadata, and the export's files, info and size. Every call opens the
// dataset with the caller's rights first (RepoService::Open), so private datasets follow
// the repo's read rules. Answers are JSON objects in the spec's shapes, with the source
// commit they were computed from (the X-Revision header).
//
// Errors common to every call (core/error_codes.def, spec §3):
//   ExternalUnauthenticatedError  anonymous caller, dataset missing or not readable
//   ExternalAuthenticatedError    signed-in caller, dataset missing or not readable
//   NotSupportedDisabledViewerError  the README says `viewer: false`
//   ResponseNotReady              the export has not got there yet (it is queued)
//   ResponseNotFound              no such config or split
//   the split's cached error      (DatasetGenerationError, EmptyDatasetError, …)

#include <boost/json/object.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/lru.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/ttl_cache.h"
#include "db/viewer_store.h"
#include "duckdb/engine.h"
#include "services/repo/repo_service.h"
#include "services/viewer/export_queue.h"
#include "services/viewer/filter_expr.h"
#include "services/viewer/search_indexes.h"
#include "storage/blob_store.h"

namespace hangar::services::viewer {

// An answer and the commit of the data it was computed from.
struct ViewerAnswer {
  boost::json::object body;
  std::string revision;  // 40 hex, "" when none
};

struct ViewerDeps {
  RepoService& repos;
  db::ViewerStore& store;
  storage::BlobStore& blobs;
  // The reading engines: no writes, allowed to read cache_dir. `engine` runs the scans
  // (filter, search, statistics) on all its threads; `rows_engine` the point reads of
  // /rows and /first-rows, on one thread each (a page is a row group or two: splitting it
  // across threads costs more than it saves). They may be the same engine.
  duckdb::Engine& engine;
  duckdb::Engine& rows_engine;
  ExportQueue* queue = nullptr;  // where missing exports are queued; null: none is
};

struct ViewerOptions {
  std::string cache_dir;          // the shards' local copies (ExportOptions::cache_dir)
  int64_t state_ttl_ms = 0;       // how long a dataset's state is served from memory
  size_t file_cache_entries = 0;  // splits whose file lists are kept in memory
  std::chrono::milliseconds query_timeout{0};
  uint64_t max_result_bytes = 0;  // rows of one /rows page at most (TooBigContentError)
  std::chrono::milliseconds statistics_timeout{0};  // each statement of /statistics
  // The splits' search indexes (SearchIndexes); "": /search answers ResponseNotReady.
  std::string search_dir;
};

// Thread-safe; calls block (database, DuckDB, blob store).
class ViewerService {
 public:
  ViewerService(ViewerDeps deps, ViewerOptions options);
  ~ViewerService();

  // After a push to `repo` whose default branch is now at `head` (a RepoService push
  // listener): queues its export when it is a dataset whose export is not of `head`.
  void AfterPush(const RepoHandle& repo, const std::string& head);
  // Queues the exports a stopped process left unfinished (at start-up).
  void ResumeUnfinished();
  // After an export of `repo_id`: reads the footer of each of its shards into the point
  // reader's cache (a first read of a shard's footer costs 5–13 ms of its page), and
  // queues the search index builds of its Ready splits.
  void AfterExport(int64_t repo_id);
  // Drops what is cached of `repo_id` (the export job wrote its state).
  void Invalidate(int64_t repo_id);

  // /is-valid at the level the non-empty names give (§4.1).
  Result<ViewerAnswer> IsValid(const Principal& who, const RepoId& id, const std::string& config,
                               const std::string& split);
  // /splits, for the dataset or one config (§4.2).
  Result<ViewerAnswer> Splits(const Principal& who, const RepoId& id, const std::string& config);
  // /first-rows (§4.3): up to 100 rows within the 1 MB budget.
  Result<ViewerAnswer> FirstRows(const Principal& who, const RepoId& id, const std::string& config,
                                 const std::string& split);
  // /rows (§4.4): rows [offset, offset + length), length ≤ 100 (checked by the caller).
  Result<ViewerAnswer> Rows(const Principal& who, const RepoId& id, const std::string& config,
                            const std::string& split, int64_t offset, int64_t length);
  // /search (§4.5): the rows holding any term of `query` (text_terms.h) in a string
  // column, ranked by BM25 (search_index.h) from the split's index. Errors: also
  // ResponseNotReady (the index is being built), SearchFeatureNotAvailableError (no string
  // column), MissingRequiredParameter (no word), InvalidParameter (too many words).
  Result<ViewerAnswer> Search(const Principal& who, const RepoId& id, const std::string& config,
                              const std::string& split, const std::string& query, int64_t offset,
                              int64_t length);
  // /filter (§4.6): the rows where `where` holds ("" = all), ordered by `orderby` ("" = row
  // order). Errors: also InvalidParameter (a condition the parser or the engine refuses).
  Result<ViewerAnswer> Filter(const Principal& who, const RepoId& id, const std::string& config,
                              const std::string& split, const std::string& where,
                              const std::string& orderby, int64_t offset, int64_t length);
  // /statistics (§4.10), computed on first demand and kept for the export's lifetime.
  // Errors: also ResponseNotReady while another request computes the same split's.
  Result<ViewerAnswer> Statistics(const Principal& who, const RepoId& id, const std::string& config,
                                  const std::string& split);
  // /croissant-crumbs (§4.11): the export as Croissant JSON-LD, URLs under `base_url`;
  // `full` false keeps at most 1000 fields a record set.
  Result<ViewerAnswer> Croissant(const Principal& who, const RepoId& id, bool full,
                                 const std::string& base_url);
  // /parquet (§4.7) with URLs under `base_url` ("https://hub.example", no trailing '/').
  Result<ViewerAnswer> Parquet(const Principal& who, const RepoId& id, const std::string& config,
                               const std::string& base_url);
  // /info (§4.8) and /size (§4.9), for the dataset or one config.
  Result<ViewerAnswer> Info(const Principal& who, const RepoId& id, const std::string& config);
  Result<ViewerAnswer> Size(const Principal& who, const RepoId& id, const std::string& config);

  // The state of a dataset's export, as the answers read it.
  struct State {
    db::ViewerExport export_row;
    std::vector<db::ViewerSplit> splits;
  };

 private:
  struct Split;
  Result<std::shared_ptr<const State>> Open(const Principal& who, const RepoId& id);
  Result<std::shared_ptr<const State>> LoadState(int64_t repo_id);
  Result<Split> FindSplit(const Principal& who, const RepoId& id, const std::string& config,
                          const std::string& split);
  Result<std::shared_ptr<const std::vector<db::ViewerFile>>> Files(const State& state,
                                                                   const db::ViewerSplit& split);
  // The columns of a split's export as the engine reads its first shard (the types the
  // rows and statistics need; columns_json keeps only their spellings).
  Result<std::shared_ptr<const std::vector<duckdb::Column>>> Schema(
      const std::string& key, const std::vector<db::ViewerFile>& files);
  // The local file of one shard, fetched into the cache when it is not there.
  Result<std::string> LocalPath(const db::ViewerFile& file);
  // The search index's description of a split: its files and text columns.
  SearchIndexSpec SearchSpec(const Split& split) const;
  // Rows `rows` (indexes in the split, any order) of `split` as /rows rows, in that order.
  Result<boost::json::array> ReadRowsAt(const Split& split, const std::vector<uint64_t>& rows);
  // Rows [offset, offset + length) of `split` as /rows rows ({"row_idx","row",…}).
  // With `max_cell_chars`, text cells are read cut to that many characters and bytes
  // not at all (/first-rows, whose budget cuts them anyway).
  Result<boost::json::array> ReadRows(const Split& split, int64_t offset, int64_t length,
                                      int64_t max_cell_chars = 0);
  // A page of the rows of `split` where `where` holds (all when null), in `order` (row
  // order when null), and how many rows match.
  struct Matches {
    boost::json::array rows;
    int64_t total = 0;
  };
  Result<Matches> QueryRows(const Split& split, const FilterClause* where,
                            const FilterClause* order, int64_t offset, int64_t length);
  // The /rows-shaped answer of a page (§4.4).
  boost::json::object RowsPage(const Split& split, Matches matches) const;

  ViewerDeps deps_;
  ViewerOptions options_;
  TtlCache<std::shared_ptr<const State>> states_;
  LruCache<std::shared_ptr<const std::vector<db::ViewerFile>>> files_;
  LruCache<std::shared_ptr<const std::vector<duckdb::Column>>> schemas_;
  LruCache<std::shared_ptr<const boost::json::object>> statistics_;
  std::mutex statistics_mu_;
  std::set<std::string> statistics_running_;  // keys being computed (under statistics_mu_)
  std::unique_ptr<SearchIndexes> search_;     // null without options_.search_dir
};

}  // namespace hangar::services::viewer

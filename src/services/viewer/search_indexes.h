#pragma once
// SearchIndexes: the splits' full-text indexes (search_index.h, dataset-viewer.md §4.5)
// under one directory, each named by a key of what it indexes, and the thread that builds
// them. An index is built on first demand (a /search, or the end of an export), as the
// public viewer builds its DuckDB index per split; until it is there, a search is told to
// retry (ResponseNotReady). Built indexes survive restarts; once one is built, the older
// indexes of its owner (the split's earlier exports) are removed, and a directory left
// half-written by a killed build is removed at start-up.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"
#include "duckdb/engine.h"
#include "services/viewer/search_index.h"

namespace hangar::services::viewer {

// What one index holds: the text columns of a split's Parquet files.
struct SearchIndexSpec {
  // Whose index it is, "<repo id>-<16 hex of config and split>": a newer index of the
  // same owner replaces the older ones on disk.
  std::string owner;
  std::string key;  // names the index: "<owner>-<hex>" (SearchIndexKey)
  struct File {
    Sha256 sha256;  // the shard, read through SearchIndexes' LocalPath
    uint64_t row_offset = 0, num_rows = 0, bytes = 0;
  };
  std::vector<File> files;           // in row order
  std::vector<std::string> columns;  // the text columns, by name
  std::string language;              // TermCutter's
};

// The owner of the index of split `config`/`split` of repo `repo_id`.
std::string SearchIndexOwner(int64_t repo_id, const std::string& config, const std::string& split);
// The key of `spec`'s index from its owner, files, columns and language: it changes when
// any does.
std::string SearchIndexKey(const SearchIndexSpec& spec);

// Builds the index of `spec` in `dir` (which must not exist), reading each file's text
// columns (cast to VARCHAR) with `engine`, a few thousand rows a query; `local_path`
// gives a shard's local file. Stops with Unavailable once `cancel` is set. Errors: the
// engine's and the writer's.
Result<void> BuildSearchIndex(duckdb::Engine& engine, const SearchIndexSpec& spec,
                              const std::function<Result<std::string>(const Sha256&)>& local_path,
                              const std::string& dir, const std::atomic<bool>& cancel);

class SearchIndexes {
 public:
  using LocalPath = std::function<Result<std::string>(const Sha256& sha256)>;
  // Indexes live in `root` (created). Starts the builder thread.
  SearchIndexes(std::string root, duckdb::Engine& engine, LocalPath local_path);
  // Cancels a running build and joins the thread.
  ~SearchIndexes();
  SearchIndexes(const SearchIndexes&) = delete;
  SearchIndexes& operator=(const SearchIndexes&) = delete;

  // The index of `spec`, when built. Else queues its build (once) and answers
  // ResponseNotReady (also when the directory holds no readable index: it is built
  // again); after a failed build, UnexpectedError (the cause is logged; the build is tried
  // again after a restart).
  Result<std::shared_ptr<const SearchIndex>> Get(const SearchIndexSpec& spec);
  // Queues the build of `spec` unless it is built, queued or failed.
  void Prepare(const SearchIndexSpec& spec);
  // Drops the index of `spec` (a lookup found it damaged) and queues its build again.
  void Discard(const SearchIndexSpec& spec);
  // Blocks until no build is queued or running (tests).
  void WaitIdle();

 private:
  void Work();
  // Removes the indexes of spec's owner other than spec's own.
  void RemoveOlder(const SearchIndexSpec& spec);
  // Whether the index is on disk (opened into opened_ then); under mu_.
  bool Opened(const std::string& key);

  std::string root_;
  duckdb::Engine& engine_;
  LocalPath local_path_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<SearchIndexSpec> waiting_;
  std::set<std::string> queued_;  // keys waiting or running
  std::map<std::string, std::shared_ptr<const SearchIndex>> opened_;
  std::map<std::string, std::string> failed_;  // key -> why
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hangar::services::viewer

#pragma once
// The card index (issue #4): what a repo's model/dataset card says about it, in the shape
// listings filter on (hf-api.md §5.2 `filter`, `pipeline_tag`; §3.3 `tags`,
// `library_name`), and download counts for the `downloads` and trending sorts.

#include <boost/json/object.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/repo_id.h"
#include "core/result.h"
#include "db/repo_store.h"

namespace hangar::services {

// The indexed part of a card.
struct CardMeta {
  std::string library;            // `library_name`, "" when absent
  std::string pipeline;           // `pipeline_tag`, "" when absent
  std::vector<std::string> tags;  // HF-style tags, first occurrence order, no duplicates
};

// Bounds on what one card may put in the index.
constexpr size_t kMaxCardTags = 100;
constexpr size_t kMaxCardTagBytes = 200;

// The CardMeta of `card_data` (README.md's YAML front matter, services::ParseCardData), as
// the Hub derives it: the library name, the card's `tags`, the pipeline tag, then one tag
// per language code, `dataset:X` per `datasets` entry, `base_model:X` per `base_model`
// entry and `license:X`. Datasets get `language:X`, `license:X`, `task_categories:X`,
// `task_ids:X`, `size_categories:X`, `multilinguality:X` and `annotations_creators:X`
// instead of bare languages. Fields may be a string or a list of strings (numbers are
// taken as text); other shapes are ignored. Every value has control characters removed
// and surrounding spaces trimmed; values that end up empty or longer than
// kMaxCardTagBytes are skipped, and tags stop at kMaxCardTags. Never fails.
CardMeta ExtractCardMeta(const boost::json::object& card_data, RepoType type = RepoType::Model);

// Counts downloads in memory and writes them to the RepoStore in batches, so serving a
// file never waits on the database. Thread-safe. Counts are best effort: those not yet
// flushed when the process dies are lost; a failed flush keeps them for the next one.
class DownloadCounter {
 public:
  struct Options {
    // How often the background thread flushes; 0 = no thread, Flush() only.
    std::chrono::milliseconds flush_interval{std::chrono::seconds(30)};
    // Unix seconds now; the day of a download is now / 86400. Injected by tests.
    std::function<int64_t()> clock;
    // Called after a Flush that wrote counts (e.g. to drop cached repo records, so that
    // model info shows the new totals at once).
    std::function<void()> after_flush;
  };

  DownloadCounter(db::RepoStore& repos, Options options);
  // Stops the thread and flushes what is left.
  ~DownloadCounter();
  DownloadCounter(const DownloadCounter&) = delete;
  DownloadCounter& operator=(const DownloadCounter&) = delete;

  // One download of repo `repo_id` (db::RepoRecord::id), now. A mutex-guarded map
  // increment: no I/O.
  void Count(int64_t repo_id);
  // Writes every pending count (db::RepoStore::AddDownloads). Errors: the first store
  // error; the counts that failed are kept and retried by the next Flush.
  Result<void> Flush();
  // Downloads counted but not yet flushed.
  int64_t Pending() const;

 private:
  using Key = std::pair<int64_t, int64_t>;  // repo id, day
  void Run();

  db::RepoStore& repos_;
  Options options_;
  mutable std::mutex mu_;
  std::map<Key, int64_t> pending_;  // guarded by mu_
  std::mutex flush_mu_;             // one flush at a time
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace hangar::services

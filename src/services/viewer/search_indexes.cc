// SearchIndexes and BuildSearchIndex (search_indexes.h).

#include "services/viewer/search_indexes.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/log.h"
#include "core/sha256.h"
#include "core/util.h"
#include "services/viewer/text_terms.h"

namespace hangar::services::viewer {
namespace fs = std::filesystem;

namespace {

using duckdb::Identifier;
using duckdb::Sql;
using duckdb::SqlText;

// Rows a query reads at most, and the bytes of their text: a query that outgrows the cap
// returns the rows it has, and the next one starts after them.
constexpr int64_t kBatchRows = 8192;
constexpr uint64_t kBatchBytes = 64ull << 20;
constexpr std::chrono::seconds kBatchTimeout{60};
// Raw postings kept in memory before they are appended to the bucket files.
constexpr size_t kFlushBytes = 32u << 20;
// One bucket per this many bytes of Parquet (a bucket's postings are read whole by a
// lookup, and held whole while the build sorts it).
constexpr uint64_t kParquetBytesPerBucket = 1ull << 20;
constexpr int kIndexFormat = 1;  // in the key: a new format builds new indexes

}  // namespace

std::string SearchIndexOwner(int64_t repo_id, const std::string& config, const std::string& split) {
  Sha256Hasher h;
  h.Update(config + '\n' + split);
  return std::to_string(repo_id) + "-" + h.Finish().Hex().substr(0, 16);
}

std::string SearchIndexKey(const SearchIndexSpec& spec) {
  Sha256Hasher h;
  h.Update("hangar-search-index " + std::to_string(kIndexFormat) + '\n' + spec.language + '\n');
  for (const auto& c : spec.columns) {
    h.Update(std::to_string(c.size()) + ':');
    h.Update(c);
  }
  h.Update("\n");
  for (const auto& f : spec.files)
    h.Update(f.sha256.Hex() + ' ' + std::to_string(f.row_offset) + '\n');
  return spec.owner + "-" + h.Finish().Hex().substr(0, 32);
}

Result<void> BuildSearchIndex(duckdb::Engine& engine, const SearchIndexSpec& spec,
                              const std::function<Result<std::string>(const Sha256&)>& local_path,
                              const std::string& dir, const std::atomic<bool>& cancel) {
  uint64_t bytes = 0;
  for (const auto& f : spec.files) bytes += f.bytes;
  auto buckets =
      static_cast<uint32_t>(std::clamp<uint64_t>(bytes / kParquetBytesPerBucket, 16, 65536));
  HANGAR_ASSIGN_OR_RETURN(auto writer, SearchIndexWriter::Create(dir, buckets, kFlushBytes));
  TermCutter cutter(spec.language);
  SqlText select("SELECT ");
  for (size_t c = 0; c < spec.columns.size(); ++c) {
    select += c ? Sql(", CAST(") : Sql("CAST(");
    select += Identifier::Quote(spec.columns[c]);
    select += " AS VARCHAR)";
  }
  select += " FROM read_parquet(?) WHERE file_row_number >= ? AND file_row_number < ?";
  std::vector<std::string> terms;
  for (const auto& f : spec.files) {
    HANGAR_ASSIGN_OR_RETURN(std::string path, local_path(f.sha256));
    for (uint64_t next = 0; next < f.num_rows;) {
      if (cancel) return MakeError(ErrorCode::Unavailable, "the search index build was stopped");
      uint64_t end = std::min<uint64_t>(f.num_rows, next + kBatchRows);
      duckdb::Query q(select, {path, next, end});
      q.timeout = kBatchTimeout;
      q.max_result_bytes = kBatchBytes;
      q.on_cap = duckdb::OnCap::Truncate;
      HANGAR_ASSIGN_OR_RETURN(auto result, engine.Run(q));
      // A single row over the cap is indexed without its text, rather than never.
      uint64_t got = std::max<uint64_t>(result.rows.size(), 1);
      for (uint64_t r = 0; r < got; ++r) {
        terms.clear();
        if (r < result.rows.size())
          for (const auto& cell : result.rows[r])
            if (const auto* text = std::get_if<std::string>(&cell)) cutter.Cut(*text, terms);
        HANGAR_TRY(writer->Add(f.row_offset + next + r, terms));
      }
      next += got;
    }
  }
  return writer->Finish(cutter.language());
}

SearchIndexes::SearchIndexes(std::string root, duckdb::Engine& engine, LocalPath local_path)
    : root_(std::move(root)), engine_(engine), local_path_(std::move(local_path)) {
  std::error_code ec;
  fs::create_directories(root_, ec);
  // What a killed build left: its directory is never renamed into place.
  for (const auto& entry : fs::directory_iterator(root_, ec))
    if (entry.path().filename().string().find(".tmp-") != std::string::npos)
      fs::remove_all(entry.path(), ec);
  thread_ = std::thread([this] { Work(); });
}

SearchIndexes::~SearchIndexes() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool SearchIndexes::Opened(const std::string& key) {
  if (opened_.count(key)) return true;
  auto index = SearchIndex::Open(root_ + "/" + key);
  if (!index) return false;
  if (opened_.size() >= 4096) opened_.clear();  // a bound; reopening costs one small read
  opened_[key] = std::make_shared<const SearchIndex>(std::move(*index));
  return true;
}

Result<std::shared_ptr<const SearchIndex>> SearchIndexes::Get(const SearchIndexSpec& spec) {
  {
    std::lock_guard lock(mu_);
    if (Opened(spec.key)) return opened_.at(spec.key);
    // The cause is in the log: it names the server's files.
    if (failed_.count(spec.key))
      return MakeError(ErrorCode::UnexpectedError, "The search index could not be built.");
  }
  Prepare(spec);
  return MakeError(ErrorCode::ResponseNotReady,
                   "The search index is being built. Please retry later.");
}

void SearchIndexes::Prepare(const SearchIndexSpec& spec) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queued_.count(spec.key) || failed_.count(spec.key) || Opened(spec.key)) return;
    queued_.insert(spec.key);
    waiting_.push_back(spec);
  }
  wake_.notify_one();
}

void SearchIndexes::Discard(const SearchIndexSpec& spec) {
  std::error_code ec;
  {
    std::lock_guard lock(mu_);
    opened_.erase(spec.key);
    // Renamed first, so no reader opens it again; a running lookup keeps its bucket.
    std::string dir = root_ + "/" + spec.key;
    fs::rename(dir, dir + ".tmp-damaged", ec);
  }
  fs::remove_all(root_ + "/" + spec.key + ".tmp-damaged", ec);
  Log("viewer")->warn("search index {} is damaged: rebuilding it", spec.key);
  Prepare(spec);
}

void SearchIndexes::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return queued_.empty() || stopping_; });
}

void SearchIndexes::RemoveOlder(const SearchIndexSpec& spec) {
  std::error_code ec;
  std::vector<std::string> older;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    std::string name = entry.path().filename().string();
    if (name != spec.key && name.starts_with(spec.owner + "-") &&
        name.find(".tmp-") == std::string::npos)
      older.push_back(name);
  }
  {
    std::lock_guard lock(mu_);
    for (const auto& name : older) opened_.erase(name);
  }
  for (const auto& name : older) fs::remove_all(root_ + "/" + name, ec);
}

void SearchIndexes::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (stopping_) break;
    SearchIndexSpec spec = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    std::string dir = root_ + "/" + spec.key, tmp = dir + ".tmp-" + RandomHex(8);
    auto built = BuildSearchIndex(engine_, spec, local_path_, tmp, stopping_);
    std::error_code ec;
    if (built) {
      fs::remove_all(dir, ec);  // a damaged index of the same key (Discard renamed it away)
      fs::rename(tmp, dir, ec);
      if (ec) built = MakeError(ErrorCode::Internal, "cannot rename " + tmp + ": " + ec.message());
    }
    if (!built) fs::remove_all(tmp, ec);
    if (built) RemoveOlder(spec);
    lock.lock();
    queued_.erase(spec.key);
    if (!built && !stopping_) {
      Log("viewer")->warn("search index {} failed: {}", spec.key, built.error().message);
      failed_[spec.key] = built.error().message;
    }
    if (queued_.empty()) idle_.notify_all();
  }
  idle_.notify_all();
}

}  // namespace hangar::services::viewer

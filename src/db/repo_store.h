#pragma once
// RepoStore: the repos table (one row per model, dataset or space) and its listing.
// Interface only; SqlRepoStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/repo_id.h"
#include "core/result.h"

namespace hangar::db {

struct RepoRecord {
  int64_t id = 0;
  RepoType type = RepoType::Model;
  std::string ns;    // namespace: a user or org name
  std::string name;  // name within the namespace
  bool is_private = false;
  int64_t created_at = 0;     // unix seconds
  int64_t last_modified = 0;  // unix seconds
  std::string last_commit;    // 40-hex commit Oid of the default branch head, "" when empty
  std::string default_branch = "main";
  // Model-card metadata of the default branch's README.md (services/repo/card_index.h), kept
  // by SetCardMeta: HF's library_name and pipeline_tag ("" = none) and tags in card order.
  std::string library;
  std::string pipeline;
  std::vector<std::string> tags;
  // Downloads counted by AddDownloads, all time (hf-api.md §3.3 `downloads`; HF itself
  // reports 30 days there, Hangar reports all time in both it and `downloadsAllTime`).
  int64_t downloads = 0;
  // The trending score: downloads in the 7 days up to the last RefreshTrending (today
  // included), plus those AddDownloads counted since.
  int64_t trending = 0;
  // A pull mirror of a repository elsewhere (db/mirror_store.h): read-only for users.
  bool is_mirror = false;
  // The gate on its files (issue 19 §1, docs/gating.md): "" none, "auto" (a request is
  // accepted at once) or "manual" (the repo's admins decide).
  std::string gated;
  // Users who like it (db/like_store.h keeps it with their rows; issue 19 §3).
  int64_t likes = 0;
  // A space's SDK as created (huggingface_hub's space_sdk): "gradio", "streamlit",
  // "docker", "static"; "" for models, datasets and spaces made without one.
  std::string sdk;

  RepoId Id() const { return RepoId{type, ns, name}; }
};

// Sort keys of a listing (hf-api.md §5.2); unknown client keys map to LastModified.
// Downloads: all-time downloads. Trending: RepoRecord::trending. Likes: RepoRecord::likes.
// Ties are broken by id.
enum class RepoSort { LastModified, CreatedAt, Id, Downloads, Trending, Likes };

// Maps "lastModified", "createdAt", "id", "downloads" (also "downloadsAllTime"),
// "trendingScore" (also "trending"), "likes"; anything else gives LastModified.
RepoSort ParseRepoSort(std::string_view s);

struct RepoQuery {
  std::optional<RepoType> type;   // none = all types
  std::string search;             // case-insensitive substring of "ns/name"; "" = all
  std::string author;             // exact namespace; "" = all
  std::vector<std::string> tags;  // every one must be among the repo's tags; empty = all
  std::string library;            // exact library_name; "" = all
  std::string pipeline;           // exact pipeline_tag; "" = all
  RepoSort sort = RepoSort::LastModified;
  bool descending = true;
  int limit = 100;  // page size, clamped to [1, 10000]
  // "" = first page; else a next_cursor from the same query: the last row's sort value
  // and id (a keyset), so a page costs the same however deep it is. A repo whose sort
  // value changes while a client pages (downloads, trending) may be listed twice or not
  // at all.
  std::string cursor;
  // Visibility: public repos always; private ones only when include_all_private (site
  // admins) or when their namespace is in readable_namespaces.
  bool include_all_private = false;
  std::vector<std::string> readable_namespaces;
};

// Repos per type (RepoStore::Count).
struct RepoCounts {
  int64_t models = 0, datasets = 0, spaces = 0;
};

struct RepoPage {
  std::vector<RepoRecord> items;
  std::string next_cursor;  // "" on the last page
};

// Repos. Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those
// listed per call.
class RepoStore {
 public:
  virtual ~RepoStore() = default;

  // Inserts `repo` (id ignored; created_at/last_modified 0 mean now) and returns it with its
  // id. Errors: Conflict when (type, ns, name) exists.
  virtual Result<RepoRecord> Create(const RepoRecord& repo) = 0;
  // Errors: RepoNotFound.
  virtual Result<RepoRecord> Find(const RepoId& id) = 0;
  // Errors: RepoNotFound.
  virtual Result<RepoRecord> FindById(int64_t id) = 0;
  // Repos of `type` whose namespace and name equal `ns` and `name` ignoring ASCII case
  // (registry names are lower-case, hub names may not be; oci.md §12), at most 2, by id.
  // Empty when there is none; two mean the name is ambiguous.
  virtual Result<std::vector<RepoRecord>> FindFolded(RepoType type, std::string_view ns,
                                                     std::string_view name) = 0;
  // Deletes the row and its LFS links. Errors: RepoNotFound.
  virtual Result<void> Delete(const RepoId& id) = 0;
  // Renames `from` to `to` (same type). Errors: RepoNotFound, Conflict when `to` exists,
  // BadRequest when the types differ.
  virtual Result<RepoRecord> Move(const RepoId& from, const RepoId& to) = 0;
  // Errors: RepoNotFound.
  virtual Result<void> SetPrivate(int64_t id, bool is_private) = 0;
  // Marks the repo a pull mirror, or a normal repo again. Errors: RepoNotFound.
  virtual Result<void> SetMirror(int64_t id, bool is_mirror) = 0;
  // Sets RepoRecord::gated ("", "auto" or "manual"; the caller checked it). Errors:
  // RepoNotFound.
  virtual Result<void> SetGated(int64_t id, std::string_view gated) = 0;
  // Records a new head commit of the default branch. Errors: RepoNotFound.
  virtual Result<void> UpdateHead(int64_t id, std::string_view last_commit,
                                  int64_t last_modified) = 0;
  // One page of repos matching `q` (see RepoQuery::cursor for paging). Errors: BadRequest
  // for a cursor that this query did not produce.
  virtual Result<RepoPage> List(const RepoQuery& q) = 0;
  // How many repos of each type (models, datasets, spaces) namespace `ns` holds: public
  // ones, and private ones too when `with_private`.
  virtual Result<RepoCounts> Count(std::string_view ns, bool with_private) = 0;

  // Replaces the card metadata of repo `id` (library, pipeline and the whole tag list, in
  // one transaction). Tags keep their order; duplicates are stored once. Errors:
  // RepoNotFound.
  virtual Result<void> SetCardMeta(int64_t id, std::string_view library, std::string_view pipeline,
                                   const std::vector<std::string>& tags) = 0;
  // Adds `n` downloads of repo `id` on `day` (unix seconds / 86400) to its daily and
  // all-time counts and to its trending score. A repo deleted meanwhile is skipped silently
  // (counts are best effort).
  virtual Result<void> AddDownloads(int64_t id, int64_t day, int64_t n) = 0;
  // Sets every repo's trending score to its downloads on the 7 days up to `today` (unix
  // seconds / 86400, today included), so that days leaving the window stop counting.
  // Writes only the rows whose score changes; returns how many did.
  virtual Result<int64_t> RefreshTrending(int64_t today) = 0;
};

}  // namespace hangar::db

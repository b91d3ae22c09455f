#pragma once
// RepoService: the rules for repos — who may see or change one, creating, deleting,
// moving, visibility, listing, and keeping metadata in step with git after pushes.
// hf-api.md §6.1–6.4, §5; issue #2 point 4.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/gate_store.h"
#include "db/lfs_store.h"
#include "db/repo_store.h"
#include "git/repo_reader.h"
#include "services/auth/access_policy.h"

namespace hangar::services {

// A change of a repo's settings (PUT …/settings, hf-api.md §6.3); an unset field stays as
// it is. Every field the API takes is here, so none is accepted and then ignored.
struct RepoSettings {
  std::optional<bool> is_private;  // visibility "private"/"protected" or private: true
  // The gate on the repo's files (issue 19 §1, docs/gating.md): "auto", "manual", or ""
  // for off (`"gated": false`).
  std::optional<std::string> gated;
  // Xet storage (older Python's xet_enabled). Hangar stores files with LFS only, so only
  // false is taken.
  std::optional<bool> xet_enabled;
};

// What happened to a repo's row, for RepoService's change listeners (webhooks' repo and
// repo.config events, docs/webhooks.md).
enum class RepoChange { Created, Deleted, Moved, ConfigUpdated };
struct RepoChangeEvent {
  RepoChange change = RepoChange::Created;
  db::RepoRecord repo;    // after the change (Deleted: as it was)
  std::string git_path;   // its bare repository (Deleted: gone)
  RepoId moved_from;      // Moved: its old name
  RepoSettings settings;  // ConfigUpdated: what was set
};

// A repo the caller may use, with what they may do to it.
struct RepoHandle {
  db::RepoRecord record;
  std::string git_path;  // the bare repository's directory
  Access access = Access::Read;
};

// Thread-safe; one per process. Calls block (database, git).
struct RepoServiceOptions {
  // How long a repo's row is answered from memory, ms (config cache.ttl_ms).
  int64_t row_cache_ttl_ms = 1000;
  // The feed a repo's changed row is published on and heard from (topic "repo"), so every
  // process drops its cached copy at once; none: this process alone (other processes'
  // copies expire within row_cache_ttl_ms).
  db::ChangeFeed* changes = nullptr;
};

// What RepoService::Open does about repos it does not hold: a pull-through cache of an
// upstream hub (issue 18 §5, docs/upstream.md) brings them, and revalidates those it
// brought when they are read.
class MissingRepos {
 public:
  virtual ~MissingRepos() = default;
  // Called when `who` reads repo `id`, which is not here: brings it and returns true, or
  // false (then Open answers RepoNotFound). Its errors are Open's answer (Forbidden for a
  // repo its rules deny, GatedRepo, PayloadTooLarge, Unavailable for an unreachable
  // upstream).
  virtual Result<bool> Materialize(const Principal& who, const RepoId& id) = 0;
  // Called when `who` opens pull mirror `repo` at level `needed`, before any access rule;
  // must be cheap on the hot path (a cache queues a revalidation when its copy is older
  // than its TTL, and asks the upstream about a reader of a private or gated upstream repo
  // at most once per TTL). Its error is Open's answer (a cached repo its rules deny now:
  // Forbidden; a reader the upstream refuses: RepoNotFound or GatedRepo).
  virtual Result<void> Read(const Principal& who, const db::RepoRecord& repo, Access needed) = 0;
  // Whether pull mirror `repo_id` is the cache's: whoever Read admits reads it, and only
  // site admins administer it (the namespace is the upstream's, whoever claims its name
  // here later).
  virtual bool Caches(int64_t repo_id) = 0;
};

class RepoService {
 public:
  // `repos_root` holds {models,datasets,spaces}/<ns>/<name>.git (DESIGN.md §Data dir).
  RepoService(db::RepoStore& repos, AccessPolicy& access, git::RepoReader& reader,
              std::filesystem::path repos_root, RepoServiceOptions options = {});
  ~RepoService();

  // The repo if `who` may use it at level `needed` (Read or Write/Admin).
  // A principal bound to one repo (Principal::repo_scope, issue 18) sees no other: any
  // other repo is RepoNotFound. A deploy key (Principal::deploy_key_id) has Read on its
  // repo, or Write when its role is Write, whatever the namespace's memberships; a user
  // bound to one repo has their usual access to it.
  // Errors: RepoNotFound when it does not exist or `who` may not read it (never revealing
  // a private repo); Unauthorized when an anonymous caller needs more than Read;
  // Forbidden when a signed-in caller can read but not write (a read-only deploy key:
  // "deploy key '<title>' is read-only; <repo> needs a read-write key"), or when Write is
  // needed on a pull mirror (issue 18 §4: only its syncs change it; Admin still passes).
  // Read is reading the repo's files: on a gated repo (RepoRecord::gated) it also needs
  // `who` to pass the gate — a member of its namespace (any role), a site admin, its deploy
  // key, or a user whose access request was accepted; anyone else gets GatedRepo saying
  // how to get in (docs/gating.md; the HTTP face answers it 401 to anonymous callers).
  // Served from a short-lived cache on the hot path.
  Result<RepoHandle> Open(const Principal& who, const RepoId& id, Access needed);
  // Open with Read for what a repo shows of itself even when gated, as the public hub does:
  // its info and card, file list, refs and commit list, its pages' heads — never a file's
  // bytes. Errors: as Open with Read, never GatedRepo.
  Result<RepoHandle> OpenMetadata(const Principal& who, const RepoId& id);
  // Whether `who` passes the gate of `repo` (Open's rule with Read; true when it has none).
  // Errors: GatedRepo as Open's; the store's.
  Result<void> CheckGate(const Principal& who, const db::RepoRecord& repo);
  // The row of repo `id` (db::RepoRecord::id), not cached and without an access check:
  // for callers that hold a repo's id from a credential (deploy keys) and must know
  // whether it still exists. Errors: RepoNotFound.
  Result<db::RepoRecord> FindById(int64_t id);

  // Creates the repo with an initial commit holding .gitattributes (hf-api.md §6.1).
  // Errors: Unauthorized (anonymous), Forbidden (no write access to the namespace, or a
  // principal bound to one repo), Conflict (exists), BadRequest (an `sdk` other than
  // "gradio", "streamlit", "docker" or "static", or one given for a model or a dataset).
  Result<db::RepoRecord> Create(const Principal& who, const RepoId& id, bool is_private,
                                std::string_view sdk = {});
  // Errors: as Open with Admin, then Internal.
  Result<void> Delete(const Principal& who, const RepoId& id);
  // Renames; needs Admin on the source and Write on the target namespace (never for a
  // principal bound to one repo). Errors: as Open, Forbidden, Conflict (target exists),
  // BadRequest (type change).
  Result<db::RepoRecord> Move(const Principal& who, const RepoId& from, const RepoId& to);
  // Marks repo `id` (db::RepoRecord::id) a pull mirror or a normal repo again, for the
  // mirror service, which has checked the caller (no access check here); every replica
  // drops its cached row. Errors: RepoNotFound.
  Result<void> SetMirror(int64_t id, bool is_mirror);
  // Errors: as Open with Admin.
  Result<void> SetPrivate(const Principal& who, const RepoId& id, bool is_private);
  // Applies `settings`, all or nothing. Errors: as Open with Admin; BadRequest naming the
  // field for a setting Hangar cannot honour (gated other than "auto"/"manual"/off,
  // xet_enabled true).
  Result<void> UpdateSettings(const Principal& who, const RepoId& id, const RepoSettings& settings);
  // A page of repos `who` may see (private ones only where they can read; a principal
  // bound to one repo sees the public ones only). Errors: BadRequest (foreign cursor),
  // Internal.
  Result<db::RepoPage> List(const Principal& who, db::RepoQuery query);

  // After git changed refs (a push): records the default branch's head and the time,
  // indexes the model card of its README.md (services/repo/card_index.h; a malformed card
  // indexes as empty), writes the commit-graph with changed-path filters, drops cached
  // state, then calls the push listeners. Never fails the push: problems are logged.
  void AfterPush(const RepoHandle& repo);
  // Called by AfterPush with the repo and its default branch's head (40 hex; "" for an
  // empty repo), on the pushing thread. Add listeners before serving (not thread-safe);
  // they must not block long (the dataset viewer only queues a job).
  using PushListener = std::function<void(const RepoHandle& repo, const std::string& head)>;
  void AddPushListener(PushListener listener);
  // Called after Create, Delete, Move, SetPrivate and UpdateSettings succeeded, on the
  // calling thread. Add listeners before serving (not thread-safe); they must not block.
  using ChangeListener = std::function<void(const RepoChangeEvent&)>;
  void AddChangeListener(ChangeListener listener) {
    change_listeners_.push_back(std::move(listener));
  }
  // Where Open looks for repos it does not hold (a pull-through cache). Set before
  // serving; null: nowhere.
  void SetMissingRepos(MissingRepos* missing) { missing_ = missing; }
  // Where Open finds gated repos' accepted requests. Set before serving; null: nobody
  // outside a gated repo's namespace passes its gate.
  void SetGates(db::GateStore* gates) { gates_ = gates; }

  // Directory of the bare repository of `id`.
  std::string GitPath(const RepoId& id) const;
  // Whether the holder of an LFS download link of repo `repo_id` may still read its files
  // (the repo went private or gated, their request was rejected, they left its org since
  // the link was made): `holder` > 0 a user, 0 anonymous, < 0 a deploy key of the repo
  // (which may). Errors: RepoNotFound, GatedRepo, Forbidden, as Open.
  Result<void> CheckLinkHolder(int64_t repo_id, int64_t holder);
  // Drops every cached record (after a bulk change such as a download-count flush).
  void InvalidateAll();
  // Drops the cached record of `id` here and on every replica (after its row changed
  // outside this service, e.g. its like count).
  void Invalidate(const RepoId& id);
  // Recomputes every repo's trending score for the window ending today
  // (db::RepoStore::RefreshTrending) and drops the cached records when one changed.
  // Returns how many changed. Errors: the store's.
  Result<int64_t> RefreshTrending();

 private:
  struct Cache;
  Result<db::RepoRecord> FindCached(const RepoId& id);
  void Tell(const RepoChangeEvent& event) const {
    for (const auto& listener : change_listeners_) listener(event);
  }
  // Open and OpenMetadata: `gate` applies the gate to a Read.
  Result<RepoHandle> OpenChecked(const Principal& who, const RepoId& id, Access needed, bool gate);
  // The access `who` has to `rec`, before `needed` is compared: namespace access, or the
  // fixed access of a deploy key; None for a repo outside `who`'s repo_scope.
  Access AccessTo(const Principal& who, const db::RepoRecord& rec);
  // Stores the card metadata of README.md at `head` (empty without a readable card).
  void IndexCard(const RepoHandle& repo, const Oid& head);

  db::RepoStore& repos_;
  AccessPolicy& access_;
  git::RepoReader& reader_;
  std::filesystem::path repos_root_;
  db::ChangeFeed* changes_;
  std::unique_ptr<Cache> cache_;
  std::vector<PushListener> push_listeners_;
  std::vector<ChangeListener> change_listeners_;
  MissingRepos* missing_ = nullptr;
  db::GateStore* gates_ = nullptr;
};

}  // namespace hangar::services

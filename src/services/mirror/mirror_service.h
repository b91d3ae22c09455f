#pragma once
// MirrorService: repos kept in step with repositories elsewhere (issue 18 §4,
// docs/mirrors.md). A pull mirror is a repo made by importing an upstream; a sync then
// fetches every branch, tag and pull-request ref of the upstream (a branch deleted there
// goes here too) and the LFS objects the new commits point at, and only when all of it is
// in moves the repo's refs, in one transaction: a failed sync keeps the last good state
// and records its error. Users cannot write to a pull mirror (RepoService::Open). A push
// mirror pushes its repo's branches and tags (and their LFS objects) to a remote after
// each push. Syncs run as jobs: "mirror.pull" (key: repo id) on the schedule
// ("mirror.tick" queues the due ones) and on demand, "mirror.push" (key: mirror id) after
// each push; one at a time per repo (a lock file in the repository), at most max_syncs at
// once per process, each under a timeout, and a pull that failed waits longer after each
// failure in a row.
//
// Where a mirror may reach: http(s), git and ssh URLs whose host resolves to public
// addresses (or is listed in import.allow_private_hosts), pinned as imports are
// (services/git/git_source.h); a local path only under one of options.local_roots.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/lfs_store.h"
#include "db/mirror_store.h"
#include "services/git/git_source.h"
#include "services/git/import_service.h"
#include "services/repo/repo_service.h"
#include "storage/blob_store.h"

namespace hangar::services {

// Job kinds (docs/jobs.md).
inline constexpr std::string_view kMirrorTickJob = "mirror.tick";
inline constexpr std::string_view kMirrorPullJob = "mirror.pull";
inline constexpr std::string_view kMirrorPushJob = "mirror.push";

struct MirrorOptions {
  // Directories whose repositories a mirror may name by path ([mirrors] local_roots);
  // empty: no local path.
  std::vector<std::filesystem::path> local_roots;
  // Hosts that may resolve to non-public addresses (import.allow_private_hosts; "*" = all).
  std::vector<std::string> private_hosts;
  int64_t default_interval_s = 3600;  // a pull mirror's schedule when none is given
  int64_t min_interval_s = 60;        // the shortest schedule one may ask for
  std::chrono::milliseconds timeout = std::chrono::minutes(30);  // one sync, all steps
  int max_syncs = 1;  // syncs at once in this process; more wait as retried jobs
  // Queues a job (JobRunner::Enqueue); unset: nothing is queued (tests call Pull/Push).
  std::function<Result<void>(std::string_view kind, std::string key, int64_t run_at_ms)> enqueue;
  std::function<int64_t()> now_unix;  // defaults to NowUnix
};

// The hub acting for its mirrors and its cache (site admin, may write): it makes a cache's
// repos in the upstream's namespaces and drops them.
Principal MirrorActor();

// A new pull mirror: the repo to create and where it mirrors from.
struct PullMirrorRequest {
  RepoId id;
  bool is_private = false;
  std::string url;         // the upstream: http(s)/git/ssh URL, or a path under local_roots
  std::string credential;  // "" or a token sent as "Authorization: Bearer …" over http(s)
  int64_t interval_s = 0;  // 0 = options.default_interval_s
  // A pull-through cache's repo (UpstreamCache, docs/upstream.md): made by the hub in the
  // upstream's namespace (ImportRequest::for_cache), its LFS objects linked at each sync
  // and fetched when first read (FetchObject), revalidated when read rather than on a
  // schedule, and no first sync queued (the cache runs it). Never set from a request.
  bool for_cache = false;
  // With for_cache: a private or gated upstream repo brought with a user's upstream token
  // (`credential`), whose every reader the cache admits (db::MirrorRecord::restricted). It
  // is imported private and made public (is_private false) only once it is marked a mirror,
  // so no reader ever finds it before the cache's rule applies.
  bool restricted = false;
};

// A new push mirror of an existing repo.
struct PushMirrorRequest {
  std::string url;  // the remote, as PullMirrorRequest::url
  std::string credential;
};

// Thread-safe; one per process. Calls block (git, the network, the database).
class MirrorService {
 public:
  MirrorService(db::MirrorStore& mirrors, db::LfsStore& lfs, storage::BlobStore& blobs,
                RepoService& repos, ImportService& imports, MirrorOptions options);

  // Imports `req.url` as the new repo `req.id` (ImportService::Import, so every ref), marks
  // it a pull mirror with its schedule, and queues its first sync (which brings the LFS
  // objects). Returns the repo's row and the mirror.
  // Errors: those of Import; BadRequest for an interval below min_interval_s, a credential
  // with control characters, or a path outside local_roots ("… is not under a directory
  // mirrors may read ([mirrors] local_roots)").
  Result<std::pair<db::RepoRecord, db::MirrorRecord>> CreatePull(const Principal& who,
                                                                 const PullMirrorRequest& req);
  // Adds a push mirror to `id`, which `who` administers, and queues its first push.
  // Errors: as RepoService::Open with Admin, BadRequest as CreatePull.
  Result<db::MirrorRecord> AddPush(const Principal& who, const RepoId& id,
                                   const PushMirrorRequest& req);
  // The mirrors of `id`: its pull mirror to whoever may read it, push mirrors to its
  // admins only. Errors: as RepoService::Open with Read.
  Result<std::vector<db::MirrorRecord>> List(const Principal& who, const RepoId& id);
  // How mirror `m`'s URL is shown to a caller with `access` to its repo: without a
  // password or token, and a path on the server only to the repo's admins.
  static std::string ShownUrl(const db::MirrorRecord& m, Access access);
  // The pull mirror of repo `repo_id`, if it is one (repo pages). Errors: the store's.
  Result<std::optional<db::MirrorRecord>> PullOf(int64_t repo_id);
  // Removes mirror `mirror_id` of `id`; removing the pull mirror makes the repo an ordinary
  // one. Errors: as Open with Admin; NotFound (no such mirror of this repo).
  Result<void> Remove(const Principal& who, const RepoId& id, int64_t mirror_id);
  // Queues a sync of every mirror of `id` now. Returns how many were queued.
  // Errors: as Open with Admin; NotFound "… has no mirrors".
  Result<int> RequestSync(const Principal& who, const RepoId& id);

  // Job "mirror.pull": syncs the pull mirror of repo `repo_id` and records the outcome on
  // the mirror (its error shown, the next sync scheduled). The repo gone or no longer a
  // mirror: nothing. Errors: Unavailable when max_syncs run already (the job is retried);
  // the store's. The sync's own failure is recorded, not returned.
  Result<void> Pull(int64_t repo_id, std::stop_token stop);
  // Job "mirror.push": pushes the repo of push mirror `mirror_id` to its remote; as Pull.
  Result<void> Push(int64_t mirror_id, std::stop_token stop);
  // Brings LFS object `oid` of `size` bytes of lazy pull mirror `repo_id` (a cache's repo)
  // from its upstream into the blob store (LfsRemote::Fetch), under options.timeout.
  // Errors: NotFound (no lazy mirror), those of LfsRemote::Fetch.
  Result<void> FetchObject(int64_t repo_id, const Sha256& oid, uint64_t size);
  // How a cache's repo is revalidated (UpstreamCache::StillServed): before each sync of a
  // lazy mirror `m`, `check(id, m)` says whether the cache may still keep the repo; false
  // drops it (a cached file is never served once the upstream refuses it); an error (no
  // answer) leaves it to the sync. Set before serving.
  using CacheCheck = std::function<Result<bool>(const RepoId& id, const db::MirrorRecord& m)>;
  void SetCacheCheck(CacheCheck check) { cache_check_ = std::move(check); }
  // Queues a "mirror.pull" of repo `repo_id` now (a queued one absorbs it); failures are
  // logged.
  void QueuePull(int64_t repo_id) { Queue(kMirrorPullJob, repo_id); }
  // Job "mirror.tick": queues a "mirror.pull" for each pull mirror that is due.
  Result<void> QueueDue();
  // A push listener (RepoService::AddPushListener): queues the repo's push mirrors.
  void AfterPush(const RepoHandle& repo);

 private:
  struct Remote;
  class SyncSlot;
  Result<Remote> CheckRemote(const std::string& url, const std::string& credential) const;
  Result<void> SyncPull(const db::MirrorRecord& m, const RepoHandle& repo, std::stop_token stop);
  Result<void> SyncPush(const db::MirrorRecord& m, const RepoHandle& repo, std::stop_token stop);
  void Queue(std::string_view kind, int64_t key);
  int64_t Now() const;

  db::MirrorStore& mirrors_;
  db::LfsStore& lfs_;
  storage::BlobStore& blobs_;
  RepoService& repos_;
  ImportService& imports_;
  MirrorOptions options_;
  std::atomic<int> running_{0};
  CacheCheck cache_check_;
};

}  // namespace hangar::services

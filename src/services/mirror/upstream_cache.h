#pragma once
// UpstreamCache: a pull-through cache of upstream hubs (issue 18 §5, docs/upstream.md).
// A read of a repo Hangar does not hold, allowed by the rules, is answered from the first
// upstream (in priority order) that has it: the repo is brought as a pull mirror of the
// upstream's git URL whose refs are fetched at once and whose LFS objects are linked but
// fetched only when first read (MirrorService's lazy pull mirrors), so every route —
// model info, revisions, trees and paths-info, /resolve with its headers, git and git-lfs,
// the web pages — answers from Hangar, and the data path never leaves it. What was fetched
// is kept: commits for good, file bytes in the blob store by sha256 (deduplicated with
// everything else, known to GC). A read of a cached repo whose copy is older than the TTL
// queues a revalidation (a sync); offline, cached repos and files keep being served and
// the rest get a clear error. Concurrent first reads of one repo bring it once, and of one
// file fetch it once.
//
// Only public, ungated upstream repos are cached: a private or gated one is refused
// (GatedRepo), so a cached file is never served to a user the upstream would refuse.

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "services/lfs/missing_blobs.h"
#include "services/mirror/mirror_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

struct UpstreamOptions {
  // The upstream hubs' base URLs (http or https, no trailing '/'), first tried first;
  // empty: no cache.
  std::vector<std::string> urls;
  std::string token;  // sent to the upstreams as "Authorization: Bearer …"; "" = none
  // Repo patterns as the hub's URLs name repos ("ns/name" for models, "datasets/ns/name",
  // "spaces/ns/name"), '*' matching any run of characters (fnmatch(3) without flags). A
  // repo matching a deny pattern is refused (Forbidden); with allow patterns, one not
  // matching any is not looked for upstream (RepoNotFound).
  std::vector<std::string> allow, deny;
  int64_t ttl_s = 300;          // a cached repo's refs are revalidated when read after this
  int64_t negative_ttl_s = 60;  // a repo the upstreams do not have is not asked for again
  uint64_t max_file_bytes = 0;  // larger LFS files are refused (PayloadTooLarge); 0 = none
  std::chrono::milliseconds timeout{15'000};  // one metadata request to an upstream
  // Requests waiting at once for the cache (a first read of a repo or of a file, the
  // first one fetching, the others waiting for it); more are refused (Unavailable: retry)
  // so that a slow upstream never holds every worker of the server.
  int max_waiting = 4;
  // Whether `ns` is a user or org of this hub: its names are the hub's own, never brought
  // from an upstream (no shadowing, no name taken from under a local user). Unset: none.
  std::function<bool(const std::string& ns)> is_local_namespace;
  std::function<int64_t()> now_unix;  // defaults to NowUnix
};

// Thread-safe; one per process, installed with RepoService::SetMissingRepos and the
// content and LFS services' SetMissingBlobs.
class UpstreamCache final : public MissingRepos, public MissingBlobs {
 public:
  UpstreamCache(MirrorService& mirrors, UpstreamOptions options);

  // MissingRepos: brings repo `id` from the first upstream that has it; never one in a
  // local user's or org's namespace (false: RepoNotFound). Errors: Forbidden
  // (a deny rule), GatedRepo (private or gated upstream), Unavailable (no upstream has
  // answered and one could not be reached: "… is not cached and the upstream … is
  // unreachable"), those of MirrorService::CreatePull.
  Result<bool> Materialize(const Principal& who, const RepoId& id) override;
  // MissingRepos: queues a revalidation of a cached repo read after its TTL. Errors:
  // Forbidden for a cached repo a deny rule names now.
  Result<void> Read(const db::RepoRecord& repo) override;
  // MissingRepos: whether `repo_id` is a cached repo.
  bool Caches(int64_t repo_id) override { return Fills(repo_id); }
  // What the upstream `mirror_url` (a cached repo's) says of `id` now: true while it is
  // public there, false once it is private, gated or gone (the cache then drops its copy:
  // MirrorService's revalidation). Errors: Unavailable/BadGateway (no answer: the copy
  // stays, offline).
  Result<bool> StillPublic(const RepoId& id, const std::string& mirror_url);
  // MissingBlobs: whether `repo_id` is a cached repo.
  bool Fills(int64_t repo_id) override;
  // MissingBlobs: fetches the object once for all concurrent callers. Errors:
  // PayloadTooLarge (over max_file_bytes), those of MirrorService::FetchObject.
  Result<void> Fill(int64_t repo_id, const Sha256& oid, uint64_t size) override;

 private:
  // What one upstream says of a repo.
  enum class Answer { Public, Refused, Absent };
  Result<Answer> Ask(const std::string& base, const RepoId& id);
  // Takes one of max_waiting for the caller's wait; released by the returned guard.
  // Errors: Unavailable when all are taken.
  Result<std::shared_ptr<void>> Wait();
  Result<bool> Bring(const RepoId& id);
  int64_t Now() const;
  struct Known {
    bool cache = false;       // a lazy pull mirror (else an ordinary one)
    int64_t fresh_until = 0;  // unix s; then a read queues a revalidation
  };
  // What repo `repo_id` is to the cache: its mirror row, read once per process.
  Result<Known> Learn(int64_t repo_id);

  MirrorService& mirrors_;
  UpstreamOptions options_;
  std::mutex mu_;
  // In-flight first reads, by repo path and by oid: later callers wait for the first.
  std::map<std::string, std::shared_future<Result<bool>>> repo_flights_;
  std::map<std::string, std::shared_future<Result<void>>> blob_flights_;
  std::map<std::string, int64_t> absent_until_;  // negative answers, unix s
  std::unordered_map<int64_t, Known> known_;     // by repo id
  int waiting_ = 0;                              // guarded by mu_: see max_waiting
};

}  // namespace hangar::services

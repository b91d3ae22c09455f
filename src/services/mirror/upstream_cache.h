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
// A private or gated upstream repo is brought only for a user who set their own token for
// that upstream (SetUserToken) and whom the upstream lets read it (its auth-check); the
// copy is then `restricted`: every reader needs the upstream's own yes for their own token,
// asked at most once per TTL per reader (kept while the upstream is unreachable), so a
// cached file of such a repo is never served to a user the upstream would refuse. Others
// are refused: RepoNotFound for a private upstream repo, GatedRepo for a gated one.

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
#include "db/mirror_store.h"
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

// One upstream hub as a user sees it in their settings.
struct UpstreamTokenInfo {
  std::string upstream;       // its base URL ([upstream] url)
  bool token_set = false;     // whether the user set a token for it
  std::string upstream_user;  // who the upstream said the token is
  int64_t set_at = 0;         // unix seconds; 0 when none is set
};

// Thread-safe; one per process, installed with RepoService::SetMissingRepos and the
// content and LFS services' SetMissingBlobs.
class UpstreamCache final : public MissingRepos, public MissingBlobs {
 public:
  // `store` keeps the users' upstream tokens (and restricted mirrors' credentials).
  UpstreamCache(MirrorService& mirrors, db::MirrorStore& store, UpstreamOptions options);

  // MissingRepos: brings repo `id` from the first upstream that has it; never one in a
  // local user's or org's namespace (false: RepoNotFound). A private or gated upstream
  // repo is brought with `who`'s own token for that upstream, when the upstream lets them
  // read it. Errors: Forbidden (a deny rule), GatedRepo (gated upstream and `who` has no
  // token there or no access), Unavailable (no upstream has answered and one could not be
  // reached: "… is not cached and the upstream … is unreachable"; the cache is busy),
  // those of MirrorService::CreatePull.
  Result<bool> Materialize(const Principal& who, const RepoId& id) override;
  // MissingRepos: queues a revalidation of a cached repo read after its TTL, and admits
  // the reader of a restricted one (see the top). Errors: Forbidden for a cached repo a
  // deny rule names now; RepoNotFound (private upstream) or GatedRepo (gated) for a reader
  // the upstream refuses or whom the cache cannot ask (anonymous, no token set);
  // Unavailable when the upstream cannot be asked and has never said yes to this reader.
  Result<void> Read(const Principal& who, const db::RepoRecord& repo, Access needed) override;
  // MissingRepos: whether `repo_id` is a cached repo.
  bool Caches(int64_t repo_id) override { return Fills(repo_id); }
  // Revalidation of cached repo `id` whose mirror is `m` (MirrorService::CacheCheck):
  // false once its upstream is no longer configured, or for an unrestricted copy once the
  // upstream shows it private, gated or gone (the cache then drops its copy). A restricted
  // copy is kept; when the upstream refuses the token it fetches with, that token is
  // dropped from it (readers' own verdicts still guard it). Errors: Unavailable/BadGateway
  // (no answer: the copy stays, offline).
  Result<bool> StillServed(const RepoId& id, const db::MirrorRecord& m);
  // MissingBlobs: whether `repo_id` is a cached repo.
  bool Fills(int64_t repo_id) override;
  // MissingBlobs: fetches the object once for all concurrent callers. Errors:
  // PayloadTooLarge (over max_file_bytes), those of MirrorService::FetchObject.
  Result<void> Fill(int64_t repo_id, const Sha256& oid, uint64_t size) override;

  // The configured upstreams, each with whether `who` set a token for it. Errors:
  // Unauthorized (not a signed-in user), the store's.
  Result<std::vector<UpstreamTokenInfo>> UserTokens(const Principal& who);
  // Sets `who`'s token for upstream `upstream` ("" = the only one configured) after the
  // upstream accepts it (its /api/whoami-v2); returns what the upstream says of it.
  // Errors: Unauthorized (not a signed-in user); Forbidden (a read-only credential);
  // BadRequest (no such upstream, "" with several, an empty or malformed token, one the
  // upstream refuses); Unavailable/BadGateway (the upstream cannot tell now).
  Result<UpstreamTokenInfo> SetUserToken(const Principal& who, std::string upstream,
                                         const std::string& token);
  // Removes `who`'s token for `upstream` ("" = the only one); copies fetched with it stop
  // using it. Errors: as SetUserToken; NotFound (none set).
  Result<void> DeleteUserToken(const Principal& who, std::string upstream);

 private:
  // What one upstream says of a repo.
  enum class Answer { Public, Refused, Absent };
  struct Seen {
    Answer answer = Answer::Absent;
    bool is_private = true;  // with Refused: private (else gated)
  };
  // Asks upstream `base` for repo `id`'s info with `token` ("" for none).
  Result<Seen> Ask(const std::string& base, const RepoId& id, const std::string& token);
  // Whether `base` lets the holder of `token` read `id`'s files (its auth-check).
  Result<bool> CanRead(const std::string& base, const RepoId& id, const std::string& token);
  // GET `base` + `path` with `token`, the body (at most 1 MiB) into `body`; the status.
  Result<int> Get(const std::string& base, const std::string& path, const std::string& token,
                  std::string& body);
  // Takes one of max_waiting for the caller's wait; released by the returned guard.
  // Errors: Unavailable when all are taken.
  Result<std::shared_ptr<void>> Wait();
  // `tokens`: `who`'s tokens, by upstream URL.
  Result<bool> Bring(const RepoId& id, int64_t user,
                     const std::map<std::string, std::string>& tokens);
  Result<bool> Create(const RepoId& id, const std::string& base, const std::string& credential,
                      bool restricted, bool is_private, int64_t user);
  int64_t Now() const;
  struct Known {
    bool cache = false;       // a lazy pull mirror (else an ordinary one)
    bool restricted = false;  // db::MirrorRecord::restricted
    int64_t mirror_id = 0;
    std::string base;         // the configured upstream it came from; "" if no longer one
    int64_t fresh_until = 0;  // unix s; then a read queues a revalidation
  };
  // What repo `repo_id` is to the cache: its mirror row, read once per process.
  Result<Known> Learn(int64_t repo_id);
  // Whether the upstream lets `who` read restricted repo `repo` (see the top).
  Result<void> Admit(const Principal& who, const db::RepoRecord& repo, const Known& known);
  // The refusal of a reader of restricted `repo` from `base`.
  Error Refusal(const db::RepoRecord& repo, const std::string& base) const;
  // The configured upstream `upstream` names ("" = the only one). Errors: BadRequest.
  Result<std::string> UpstreamNamed(const std::string& upstream) const;

  MirrorService& mirrors_;
  db::MirrorStore& store_;
  UpstreamOptions options_;
  std::mutex mu_;
  // In-flight first reads, by repo path (and reader, with tokens) and by oid, and upstream
  // verdicts by reader and repo: later callers wait for the first.
  std::map<std::string, std::shared_future<Result<bool>>> repo_flights_;
  std::map<std::string, std::shared_future<Result<void>>> blob_flights_;
  std::map<std::string, std::shared_future<Result<bool>>> verdict_flights_;
  std::map<std::string, int64_t> absent_until_;  // negative answers, unix s
  std::unordered_map<int64_t, Known> known_;     // by repo id
  struct Verdict {
    bool allowed = false;
    int64_t until = 0;  // unix s; then the upstream is asked again
  };
  std::map<std::pair<int64_t, int64_t>, Verdict> verdicts_;  // by (user id, repo id)
  int waiting_ = 0;                                          // guarded by mu_: see max_waiting
};

}  // namespace hangar::services

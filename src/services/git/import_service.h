#pragma once
// ImportService: makes a hub repository out of an existing git repository, copying every
// ref (issue #4 point 2; docs/import.md). Git does the copying (`git clone --mirror`);
// this service holds the rules: who may import where, which sources a caller may name,
// and that a failed or interrupted import leaves neither a repo row nor a repository.
// LFS objects are not copied: an imported repo holds the source's pointer files only.

#include <chrono>
#include <filesystem>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/repo_store.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"
#include "services/git/git_source.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// Settings of an ImportService.
struct ImportOptions {
  // Where repositories are assembled before they are moved into place: <data>/tmp. Must be
  // on the same filesystem as the repos root (the final step is a rename). Each import
  // works in its own `import-*` directory here.
  std::filesystem::path tmp_dir;
  // Wall-clock limit of one import, all git steps together (copy, commit-graph).
  std::chrono::milliseconds timeout = std::chrono::hours(1);
  // Called after each successful import with the new repo and its repository's path, e.g.
  // to queue its maintenance (MaintenanceService::Enqueue; the web import). Must not
  // block. Empty: nothing (the CLI maintains on its own, printing the steps).
  std::function<void(const RepoId&, const std::string& git_path)> after_import;
  // Hosts (as URLs name them, lower-case) that imports without allow_local may read even
  // though they resolve to loopback, private or link-local addresses (import.md
  // §network); "*" = every host. Empty: public addresses only.
  std::vector<std::string> private_hosts;
};

// What to import, as the caller gave it (validated by Import).
struct ImportRequest {
  // A git URL: http://, https://, git://, ssh://. With allow_local also an absolute path
  // (bare or non-bare repository) or a file:// URL.
  std::string source;
  RepoType type = RepoType::Model;
  std::string ns;    // namespace (user or org) of the new repo
  std::string name;  // name of the new repo
  bool is_private = false;
  // True only for callers that run on the server with its operator's rights (the CLI).
  // False for web requests: a web user must never make the server read its own disk, nor
  // reach through it a host that is not on the public internet (unless private_hosts).
  bool allow_local = false;
  // A pull-through cache's copy of an upstream hub's repo (docs/upstream.md), made by the
  // hub itself: `who` is not checked and the namespace need not be a local user or org
  // (it is the upstream's). Never set from a request.
  bool for_cache = false;
  // "" or a token sent as "Authorization: Bearer …" with every http(s) request (a private
  // upstream; AddBearer).
  std::string bearer;
  // Requesting a stop (the CLI on SIGINT, a handler whose client left) kills git and ends
  // the import with Unavailable, leaving nothing behind.
  std::stop_token stop;
};

// Thread-safe (imports of different repos run in parallel; two imports of one name race
// for the row and one gets Conflict). Calls block for as long as git copies.
class ImportService {
 public:
  // `repos_svc` gives the repositories' final paths; `repos` and `users` are the stores
  // the rest of the hub uses.
  ImportService(db::RepoStore& repos, db::UserStore& users, AccessPolicy& access,
                RepoService& repos_svc, ImportOptions options);

  // Copies every ref of `req.source` into a new repo `req.ns/req.name` of `req.type`:
  // HEAD follows the source's default branch (else main, master, or the first branch),
  // the remote configuration is dropped, the server's git config and a commit-graph with
  // changed-path Bloom filters are written, then the row is registered and the repository
  // renamed into place. Returns the new row (last_commit = HEAD's commit).
  // Errors: BadRequest (invalid name, disallowed source, a source git cannot read, with
  // git's message; a shallow or branchless source), Unauthorized (anonymous), Forbidden (no
  // write access to the namespace), NotFound (namespace is no user or org), Conflict (the
  // repo exists), Unavailable (the import took longer than options.timeout or was stopped
  // through req.stop), Internal.
  // On any error nothing is left behind: no row, no repository, no temporary directory.
  Result<db::RepoRecord> Import(const Principal& who, const ImportRequest& req);

 private:
  Result<RepoId> Authorize(const Principal& who, const ImportRequest& req);
  // `id` if no repo has it. Errors: Conflict.
  Result<RepoId> NotTaken(const RepoId& id);
  void SweepStale();

  db::RepoStore& repos_;
  db::UserStore& users_;
  AccessPolicy& access_;
  RepoService& repos_svc_;
  ImportOptions options_;
};

}  // namespace hangar::services

#pragma once
// Routes of a repo's history and storage management (issue 19 §4, docs/lfs-files.md), in
// ApiFamily::Hf, as huggingface_hub calls them:
//   POST /api/{models,datasets,spaces}/{ns}/{name}/super-squash/{branch} {message?}
//        → {"commitOid"} (super_squash_history; write access)
//   GET  …/lfs-files → [{fileOid, oid, filename, size, pushedAt, ref?, commit?}]
//        (list_lfs_files; write access; Link rel="next", ?limit= 1..1000, default 100)
//   POST …/lfs-files/batch {deletions: {sha: [...], rewriteHistory}} → the purge
//        (permanently_delete_lfs_files; admin)
//   GET  …/lfs-files/purges → the repo's purge log (a Hangar extension; admin)

#include "http/router.h"
#include "services/content/repo_storage.h"

namespace hangar::api {

// `storage` must outlive the router. Register before the `/{ns}/{name}/...` file routes.
void AddStorageRoutes(http::Router& router, services::RepoStorageService& storage);

}  // namespace hangar::api

#pragma once
// Routes of the Git LFS server (git-lfs.md §11, hf-api.md §7.3–7.4, §10.2).

#include <cstdint>

#include "config/config.h"
#include "http/router.h"
#include "services/lfs/lfs_service.h"

namespace hangar::api {

// Registers, in ApiFamily::Lfs, for each repo type prefix P in "", "datasets/", "spaces/"
// (the {name} segment may end in ".git", which is stripped):
//   POST      /P{ns}/{name}/info/lfs/objects/batch    batch API (git-lfs.md §11.4)
//   POST      /P{ns}/{name}/info/lfs/objects/verify   verify action (§11.5); ?ticket= or auth
//   GET|POST  /P{ns}/{name}/info/lfs/locks[/...]      404 "locking not supported" (§11.6)
// and the self-authorising transfer hrefs the batch hands out (no Authorization needed):
//   PUT       /lfs-objects/upload/{ticket}/{oid}      basic upload (§11.5)
//   GET|HEAD  /lfs-objects/download/{ticket}/{oid}    basic download, Range → 206/416
// ORDER: call this before adding any route whose pattern could also match these paths
// (e.g. git's /{ns}/{name}/{rest*} or a /{ns}/{name}/... catch-all): the router takes the
// first match. It reserves the namespace "lfs-objects" for the transfer routes.
// `limits.max_json_body_bytes` caps batch and verify bodies (413 above).
// `lfs` must outlive the router.
void AddLfsRoutes(http::Router& router, services::LfsService& lfs,
                  const config::LimitsConfig& limits);

}  // namespace hangar::api

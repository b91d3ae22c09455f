#pragma once
// Git smart HTTP routes (git-lfs.md §1, §3–7; hf-api.md §10.1): for models (no prefix),
// datasets/ and spaces/, with or without a `.git` suffix on the repo name:
//   GET  /{prefix}{ns}/{name}/info/refs?service=git-upload-pack|git-receive-pack
//   POST /{prefix}{ns}/{name}/git-upload-pack
//   POST /{prefix}{ns}/{name}/git-receive-pack

#include "http/router.h"
#include "services/git/git_service.h"

namespace hangar::api {

// Registers the routes above with ApiFamily::Git, dataset and space routes before the
// model ones. Call after the /api/... routes: the model patterns start with {ns}.
// `git` must outlive `router`.
void AddGitRoutes(http::Router& router, services::GitService& git);

}  // namespace hangar::api

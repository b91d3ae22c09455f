#pragma once
// Routes of SSH public keys and deploy keys (issue 18 §1, docs/ssh.md), in ApiFamily::Hf:
//   GET     /api/settings/ssh-keys                                  the caller's own keys
//   POST    /api/settings/ssh-keys          {"key","title"}         add one → 201
//   DELETE  /api/settings/ssh-keys/{id}                             delete one → 204
//   GET     /api/{models,datasets,spaces}/{ns}/{name}/deploy-keys   the repo's deploy keys
//   POST    …/deploy-keys                   {"key","title","readWrite"} → 201
//   DELETE  …/deploy-keys/{id}                                      → 204
// A key is rendered as {id, title, key ("<type> <base64>"), fingerprint, createdAt,
// lastUsedAt (null when never)}, a deploy key with readWrite too. Own keys: any signed-in
// user reads them, a credential that may write changes them; deploy keys: the repo's
// admins (Requirement::Repo with Admin).

#include "http/router.h"
#include "services/git/ssh_keys.h"

namespace hangar::api {

// `keys` must outlive the router. Register before the `/{ns}/{name}/...` file routes.
void AddSshKeyRoutes(http::Router& router, services::SshKeyService& keys);

}  // namespace hangar::api

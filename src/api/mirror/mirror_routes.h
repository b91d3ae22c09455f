#pragma once
// Routes of mirrors (issue 18 §4, docs/mirrors.md), in ApiFamily::Hf:
//   POST    /api/repos/mirror   {"name","organization"?,"type"?,"private"?,"url",
//                                "credential"?,"intervalSeconds"?}  a new pull mirror → 201
//   GET     /api/{models,datasets,spaces}/{ns}/{name}/mirrors      the repo's mirrors
//   POST    …/mirrors            {"url","credential"?}             a push mirror → 201
//   POST    …/mirrors/sync                                         sync them now → 202
//   DELETE  …/mirrors/{id}                                         → 204
// A mirror is rendered as {id, direction ("pull"|"push"), url (its password as ***),
// hasCredential, intervalSeconds (pull), createdAt, lastSyncAt, lastSuccessAt (null when
// never), lastError ("" after a success), failures, nextSyncAt (pull)}; the credential is
// never shown. Reading: the repo's readers see its pull mirror, its admins every mirror;
// changes: its admins (Requirement::Repo with Admin); a new pull mirror: whoever may create
// the repo (a token that may write).
//
// A user's own tokens for the pull-through cache's upstream hubs (docs/upstream.md):
//   GET     /api/settings/upstream-tokens   [{url, tokenSet, upstreamUser, setAt}] → 200
//   PUT     /api/settings/upstream-tokens   {"url"?, "token"}  checked upstream first → 200
//   DELETE  /api/settings/upstream-tokens?url=…                                     → 204
// ("url" may be left out when one upstream is configured); the token is never shown back.

#include "http/router.h"
#include "services/mirror/mirror_service.h"
#include "services/mirror/upstream_cache.h"

namespace hangar::api {

// `mirrors` must outlive the router. Register before the `/{ns}/{name}/...` file routes.
void AddMirrorRoutes(http::Router& router, services::MirrorService& mirrors);
// `cache` (null: the hub has no upstream, every route answers NotFound) must outlive the
// router.
void AddUpstreamTokenRoutes(http::Router& router, services::UpstreamCache* cache);

}  // namespace hangar::api

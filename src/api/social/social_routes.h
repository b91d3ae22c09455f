#pragma once
// Routes of likes and overviews (issue 19 §3, docs/social.md), in ApiFamily::Hf, as
// huggingface_hub calls them:
//   POST|DELETE /api/{models,datasets,spaces}/{ns}/{name}/like   → 200 {} (write token)
//   GET  /api/{models,datasets,spaces}/{ns}/{name}/likers
//        → [{user, fullname, type, isPro, avatarUrl}], newest first (list_repo_likers)
//   GET  /api/users/{user}/likes → [{createdAt, repo: {name, type}}] (list_liked_repos)
//   GET  /api/users/{user}/overview, /api/organizations/{org}/overview
// Lists page through Link rel="next" (?limit= 1..1000, default 100).

#include "http/router.h"
#include "services/social/social_service.h"

namespace hangar::api {

// `social` must outlive the router. Register before the `/{ns}/{name}/...` file routes.
void AddSocialRoutes(http::Router& router, services::SocialService& social);

}  // namespace hangar::api

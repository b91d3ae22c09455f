#pragma once
// The HF-compatible API (hf-api.md): JSON endpoints under /api and file downloads under
// /{prefix}{ns}/{name}/resolve|raw.

#include "config/config.h"
#include "http/router.h"
#include "services/auth/authenticator.h"
#include "services/content/commit_service.h"
#include "services/content/content_service.h"
#include "services/repo/card_index.h"
#include "services/repo/repo_service.h"

namespace hangar::api {

// What the HF handlers need; all outlive the router.
struct HfDeps {
  services::Authenticator& authenticator;  // whoami
  services::RepoService& repos;
  services::ContentService& content;
  services::CommitService& commits;
  const config::Config& config;
  // Counts GETs of /resolve files for listings' downloads and trending; none = not counted.
  services::DownloadCounter* downloads = nullptr;
  // Where commit bodies too large for the read-ahead are spooled before they are parsed
  // (<data>/tmp); "" = parsed as they arrive.
  std::string spool_dir;
};

// Registers /api/... routes. Call before any `/{ns}/{name}/...` pattern is added.
void AddHfApiRoutes(http::Router& router, HfDeps& deps);
// Registers /{prefix}{ns}/{name}/resolve/... and /raw/... for the three repo types.
void AddHfFileRoutes(http::Router& router, HfDeps& deps);

}  // namespace hangar::api

#pragma once
// The web UI's routes (issue #4): pages at the public hub's web URLs, static files.

#include "http/router.h"
#include "web/web_util.h"

namespace hangar::web {

// Registers every page. Call after the API routes (they own /api, /resolve, git and LFS
// paths; the first matching route wins).
void AddWebRoutes(http::Router& router, WebDeps& deps);

}  // namespace hangar::web

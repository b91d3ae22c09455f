#pragma once
// The HTML error page (DESIGN.md §Errors: "HTML error page"): status, a plain message and
// the request id, inside the site layout. Private repos are never revealed: services
// already answer RepoNotFound for them.

#include "core/error.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::web {

// Renders `err` as a page with the error's HTTP status. Never fails (falls back to text).
http::Response RenderErrorPage(const Error& err, const http::Request& req);

}  // namespace hangar::web

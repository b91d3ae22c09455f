#pragma once
// The HTML error page (DESIGN.md §Errors: "HTML error page"): status, a plain message and
// the request id, inside the site layout. Private repos are never revealed: services
// already answer RepoNotFound for them.

#include "core/error.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::web {

// Renders `err` as a page with the error's HTTP status. Never fails (falls back to text).
// An anonymous GET refused with Unauthorized (a page that needs a user, whether the router
// or the handler refused it) is a 303 to /login?next=<the page> instead, so the browser
// signs in and comes back; with an Authorization header sent it stays a 401 page.
http::Response RenderErrorPage(const Error& err, const http::Request& req);

}  // namespace hangar::web

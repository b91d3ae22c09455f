#pragma once
// Routes of gated repos' access requests (issue 19 §1, docs/gating.md), in ApiFamily::Hf,
// as huggingface_hub calls them (`list_*_access_requests`, `accept_`/`reject_`/
// `cancel_access_request`, `grant_access`):
//   GET   /api/{models,datasets,spaces}/{ns}/{name}/user-access-request/{pending|accepted|rejected}
//         → [{user: {user, fullname, email, type}, status, timestamp, fields?}], oldest first,
//           more pages through Link rel="next" (?limit=, default 100)
//   POST  …/user-access-request/handle  {"user", "status", "rejectionReason"?}  → 200 {}
//   POST  …/user-access-request/grant   {"user"}                                → 200 {}
// All need Write on the repo (a read token or a read member: 403). Asking for access is the
// web page's POST …/ask-access (web/pages/gate_pages.cc).

#include "http/router.h"
#include "services/repo/gate_service.h"

namespace hangar::api {

// `gates` must outlive the router. Register before the `/{ns}/{name}/...` file routes.
void AddGateRoutes(http::Router& router, services::GateService& gates);

}  // namespace hangar::api

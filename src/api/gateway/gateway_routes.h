#pragma once
// Routes of the gateway's management API (issue 16, docs/gateway.md), in ApiFamily::Hf:
//   GET    /api/v1/gateway/routes ?limit&offset   {routes: [route], next_offset}
//   POST   /api/v1/gateway/routes                 create (site admins)
//   GET    /api/v1/gateway/routes/{name}          route
//   PUT    /api/v1/gateway/routes/{name}          replace its settings (site admins)
//   DELETE /api/v1/gateway/routes/{name}          (site admins)
// and OpenAI's GET /v1/models (ApiFamily::OpenAi, a hub token as the API key): the routes
// the caller may see as {object: "list", data: [{id, object: "model", created, owned_by}]}.
// A route is {name, model, alias, version (what it names now, or null), commit, repo,
// problem, protocol, fallback, timeout_ms, retries, limits {requests_per_minute,
// tokens_per_minute}, backends [{kind, url (site admins only) or runtime, weight}], created_at,
// updated_at}.

#include "http/router.h"
#include "services/gateway/gateway_service.h"

namespace hangar::api {

// `gateway` must outlive the router.
void AddGatewayRoutes(http::Router& router, services::GatewayService& gateway);

}  // namespace hangar::api

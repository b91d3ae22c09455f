#pragma once
// Routes of the gateway itself (issue 16, docs/gateway.md §Serving requests): inference
// requests passed to a route's backends by services::GatewayProxy. A hub token is the API
// key (any signed-in caller who may see the route's model).
//   POST /v1/chat/completions, /v1/completions, /v1/embeddings   OpenAI (ApiFamily::OpenAi):
//        the route is the body's `model` (`name` or `name@alias`); `stream: true` answers
//        are passed through as server-sent events
//   GET  /v2/health/live, /v2/health/ready                       OIP: the gateway is up
//   GET  /v2/models/{name}[/versions/{v}][/ready]                OIP metadata, readiness
//   POST /v2/models/{name}[/versions/{v}]/infer                  OIP inference
//   GET  /api/v1/gateway/routes/{name}/metrics                   the route's counters
// They go before the OCI registry's /v2/{rest*} in the route table (no OCI path ends in
// `ready`, `infer`, or a model name after `/v2/models/`).

#include "http/router.h"
#include "services/gateway/gateway_proxy.h"

namespace hangar::api {

// `proxy` must outlive the router.
void AddGatewayProxyRoutes(http::Router& router, services::GatewayProxy& proxy);

}  // namespace hangar::api

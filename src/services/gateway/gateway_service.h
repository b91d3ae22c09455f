#pragma once
// GatewayService: the gateway's routes (issue 16, docs/gateway.md). A route is a name —
// what an inference request's `model` field names — bound to a registered model's alias
// (followed: moving the alias switches the route) or to one version, and to the backends
// that serve it with their weights; with a protocol (OpenAI or Open Inference Protocol v2),
// a fallback route, a timeout, retries and per-token limits.
//
// Who may do what: a route is seen by whoever sees its model (registry_service.h). Routes
// name hosts of the infrastructure, so creating, changing and deleting them needs a site
// admin; the model's admins and deployers steer them by moving aliases.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "db/gateway_store.h"
#include "services/registry/registry_service.h"

namespace hangar::services {

// A route to create or the new settings of one (its name and model stay on an update).
struct NewRoute {
  std::string name;   // [A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters
  std::string model;  // a registered model the caller can see
  std::string alias;  // the alias to follow, or "" with `version`
  int64_t version = 0;
  std::string protocol = "openai";  // "openai" or "oip"
  std::string fallback;             // another route's name, or ""
  int64_t timeout_ms = 60000;       // 1 ms … 1 h
  int64_t retries = 1;              // 0 … 5, before the first byte reaches the client
  int64_t requests_per_minute = 0;  // per token, 0 … 10^9; 0: none
  int64_t tokens_per_minute = 0;
  std::vector<db::BackendRecord> backends;  // 1 … 16; weights 0 … 100, not all 0
};

// A route with the version its target names now; `version` is empty, and `problem` says
// why, when the alias names nothing or the version is gone.
struct RouteView {
  db::RouteRecord route;
  std::optional<db::VersionRecord> version;
  std::string problem;
};

struct RoutePage {
  std::vector<RouteView> routes;
  int64_t next_offset = 0;  // 0: the last page
};

struct GatewayOptions {
  std::function<int64_t()> now_millis;  // NowUnixMillis by default
  // The protocol of runtime template `name` ("" when there is none): a backend of kind
  // "runtime" must name one speaking the route's protocol.
  std::function<std::string(const std::string& name)> runtime_protocol;
};

// Thread-safe; one per process. Errors of every call, besides those named: NotFound (a
// route or model that does not exist or `who` may not see), Unauthorized / Forbidden
// (writes by anyone but a site admin), BadRequest naming the field, Internal.
class GatewayService {
 public:
  GatewayService(db::GatewayStore& store, RegistryService& registry, GatewayOptions options = {});

  // Errors: Conflict (the name exists).
  Result<RouteView> CreateRoute(const Principal& who, const NewRoute& r);
  Result<RouteView> GetRoute(const Principal& who, const std::string& name);
  // Routes by name, `limit` 1 … 1000.
  Result<RoutePage> ListRoutes(const Principal& who, int64_t offset, int64_t limit);
  // Replaces the route's settings; r.name and r.model must be "" or the route's own.
  Result<RouteView> UpdateRoute(const Principal& who, const std::string& name, const NewRoute& r);
  Result<void> DeleteRoute(const Principal& who, const std::string& name);
  // Every route's url backends as (protocol, url), each once: what the health checks
  // probe (gateway_proxy.h). No access check: for the process itself.
  Result<std::vector<std::pair<std::string, std::string>>> AllBackends();
  // Every route, resolved as the hub itself sees it: what the runtime supervisor keeps
  // running (gateway_proxy.h). No access check: for the process itself.
  Result<std::vector<RouteView>> AllRoutes();
  // The registry's generation (RegistryService::Generation), which route changes bump too.
  uint64_t Generation() const { return registry_.Generation(); }

 private:
  Result<db::RouteRecord> Checked(const Principal& who, const NewRoute& r);
  RouteView Resolve(const Principal& who, db::RouteRecord route);
  int64_t Now() const;

  db::GatewayStore& store_;
  RegistryService& registry_;
  GatewayOptions options_;
};

}  // namespace hangar::services

#pragma once
// GatewayStore: the gateway's routes (issue 16, docs/gateway.md): a route name bound to a
// registered model's alias or version, the backends serving it with their weights, and its
// limits. Interface only; SqlGatewayStore (db/sql/, on SQLite or PostgreSQL) implements it. Times
// are unix milliseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// One backend of a route: an external server (kind "url", target its base URL) or a
// process Hangar supervises (kind "runtime", target a runtime template's name).
struct BackendRecord {
  std::string kind;
  std::string target;
  int64_t weight = 100;  // share of the route's traffic, 0–100 (0: standby)
};

struct RouteRecord {
  int64_t id = 0;
  std::string name;  // unique hub-wide: what a request's `model` names
  int64_t model_id = 0;
  std::string model;           // the model's name (read-only: from registered_models)
  std::string owner;           // the model's owner namespace (read-only)
  int64_t owner_id = 0;        // (read-only)
  bool model_private = false;  // the model is private or pins a private repo (read-only)
  std::string target_alias;    // the alias the route follows, or ""
  int64_t target_version = 0;  // the version it is pinned to when no alias, else 0
  std::string protocol;        // "openai" or "oip"
  std::string fallback;        // another route's name tried when this one fails, or ""
  int64_t timeout_ms = 60000;
  int64_t retries = 1;
  int64_t requests_per_minute = 0;  // per token; 0: no limit
  int64_t tokens_per_minute = 0;
  int64_t created_by = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::vector<BackendRecord> backends;
};

// A listing of routes: visibility as db::ModelQuery's, and a page.
struct RouteQuery {
  bool include_all_private = false;
  std::vector<int64_t> readable_owner_ids;
  int64_t offset = 0;
  int64_t limit = 100;
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class GatewayStore {
 public:
  virtual ~GatewayStore() = default;

  // Inserts `r` with its backends; returns its id. Errors: Conflict (the name exists),
  // NotFound (no such model).
  virtual Result<int64_t> CreateRoute(const RouteRecord& r) = 0;
  virtual Result<std::optional<RouteRecord>> GetRoute(const std::string& name) = 0;
  // Routes by name.
  virtual Result<std::vector<RouteRecord>> ListRoutes(const RouteQuery& q) = 0;
  // Replaces route `r.id`'s target, protocol, fallback, limits and backends (its name and
  // model stay). Errors: NotFound.
  virtual Result<void> UpdateRoute(const RouteRecord& r) = 0;
  virtual Result<void> DeleteRoute(int64_t id) = 0;  // Errors: NotFound.
};

}  // namespace hangar::db

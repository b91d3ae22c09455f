#include "db/sql/sql_gateway_store.h"

#include "db/sql/sql_where.h"

namespace hangar::db {
namespace {

// The columns ReadRoute reads; model_private as sql_where.h's Visibility decides it.
const std::string kRouteSelect =
    "SELECT g.id, g.name, g.model_id, m.name, u.name, m.owner_id, (m.private <> 0 OR " +
    PinsPrivateSql("m") +
    "), g.target_alias, g.target_version, g.protocol, g.fallback, g.timeout_ms, g.retries, "
    "g.requests_per_minute, g.tokens_per_minute, g.created_by, g.created_at, g.updated_at "
    "FROM gateway_routes g JOIN registered_models m ON m.id = g.model_id JOIN users u ON u.id "
    "= m.owner_id";

RouteRecord ReadRoute(const Stmt& s) {
  RouteRecord r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.model_id = s.Int(2);
  r.model = s.Text(3);
  r.owner = s.Text(4);
  r.owner_id = s.Int(5);
  r.model_private = s.Int(6) != 0;
  r.target_alias = s.Text(7);
  r.target_version = s.Int(8);
  r.protocol = s.Text(9);
  r.fallback = s.Text(10);
  r.timeout_ms = s.Int(11);
  r.retries = s.Int(12);
  r.requests_per_minute = s.Int(13);
  r.tokens_per_minute = s.Int(14);
  r.created_by = s.Int(15);
  r.created_at = s.Int(16);
  r.updated_at = s.Int(17);
  return r;
}

Result<void> ReadBackends(Connection& c, RouteRecord& r) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare("SELECT kind, target, weight FROM gateway_backends "
                                            "WHERE route_id = ? ORDER BY position"));
  s.Bind(1, r.id);
  while (true) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    r.backends.push_back(BackendRecord{s.Text(0), s.Text(1), s.Int(2)});
  }
  return {};
}

Result<void> WriteBackends(Connection& c, int64_t route_id,
                           const std::vector<BackendRecord>& backends) {
  {
    HANGAR_ASSIGN_OR_RETURN(auto d, c.Prepare("DELETE FROM gateway_backends WHERE route_id = ?"));
    HANGAR_TRY(d.Bind(1, route_id).Run());
  }
  for (size_t i = 0; i < backends.size(); ++i) {
    HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare("INSERT INTO gateway_backends (route_id, position, "
                                              "kind, target, weight) VALUES (?, ?, ?, ?, ?)"));
    HANGAR_TRY(s.Bind(1, route_id)
                   .Bind(2, static_cast<int64_t>(i))
                   .Bind(3, backends[i].kind)
                   .Bind(4, backends[i].target)
                   .Bind(5, backends[i].weight)
                   .Run());
  }
  return {};
}

// Binds the columns a create and an update both write, from ?1.
Stmt& BindSettings(Stmt& s, const RouteRecord& r) {
  return s.Bind(1, r.target_alias)
      .Bind(2, r.target_version)
      .Bind(3, r.protocol)
      .Bind(4, r.fallback)
      .Bind(5, r.timeout_ms)
      .Bind(6, r.retries)
      .Bind(7, r.requests_per_minute)
      .Bind(8, r.tokens_per_minute)
      .Bind(9, r.updated_at);
}

}  // namespace

Result<int64_t> SqlGatewayStore::CreateRoute(const RouteRecord& r) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<int64_t> {
    {
      // INSERT … SELECT: a missing model inserts nothing instead of an FK error.
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("INSERT INTO gateway_routes (target_alias, target_version, "
                             "protocol, fallback, timeout_ms, retries, requests_per_minute, "
                             "tokens_per_minute, updated_at, name, model_id, created_by, "
                             "created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, id, ?, ? FROM "
                             "registered_models WHERE id = ?"));
      HANGAR_TRY(BindSettings(s, r)
                     .Bind(10, r.name)
                     .Bind(11, r.created_by)
                     .Bind(12, r.created_at)
                     .Bind(13, r.model_id)
                     .Run());
      if (c->Changes() == 0)
        return MakeError(ErrorCode::NotFound,
                         "registered model #" + std::to_string(r.model_id) + " not found");
    }
    HANGAR_ASSIGN_OR_RETURN(int64_t id, c->LastInsertId());
    HANGAR_TRY(WriteBackends(*c, id, r.backends));
    return id;
  });
}

Result<std::optional<RouteRecord>> SqlGatewayStore::GetRoute(const std::string& name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kRouteSelect + " WHERE g.name = ?"));
  s.Bind(1, name);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<RouteRecord>();
  RouteRecord r = ReadRoute(s);
  HANGAR_TRY(ReadBackends(*c, r));
  return std::optional<RouteRecord>(std::move(r));
}

Result<std::vector<RouteRecord>> SqlGatewayStore::ListRoutes(const RouteQuery& q) {
  SqlWhere w;
  w.Visibility(q.include_all_private, q.readable_owner_ids, "m");
  return ReadPage<RouteRecord>(*pool_, kRouteSelect + w.sql + " ORDER BY g.name LIMIT ? OFFSET ?",
                               w, q.limit, q.offset, ReadRoute,
                               [](Connection& c, std::vector<RouteRecord>& routes) -> Result<void> {
                                 for (auto& r : routes) HANGAR_TRY(ReadBackends(c, r));
                                 return {};
                               });
}

Result<void> SqlGatewayStore::UpdateRoute(const RouteRecord& r) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE gateway_routes SET target_alias = ?, target_version = ?, "
                           "protocol = ?, fallback = ?, timeout_ms = ?, retries = ?, "
                           "requests_per_minute = ?, tokens_per_minute = ?, updated_at = ? "
                           "WHERE id = ?"));
    HANGAR_TRY(BindSettings(s, r).Bind(10, r.id).Run());
    if (c->Changes() == 0)
      return MakeError(ErrorCode::NotFound, "route #" + std::to_string(r.id) + " not found");
    return WriteBackends(*c, r.id, r.backends);
  });
}

Result<void> SqlGatewayStore::DeleteRoute(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM gateway_routes WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, id).Run());
  if (c->Changes() == 0)
    return MakeError(ErrorCode::NotFound, "route #" + std::to_string(id) + " not found");
  return {};
}

}  // namespace hangar::db

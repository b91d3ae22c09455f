#pragma once
// SqliteGatewayStore: GatewayStore over a SqlitePool (tables of migration 9). Thread-safe;
// a route and its backends are written in one transaction.

#include <memory>

#include "db/gateway_store.h"
#include "db/sqlite/sqlite_pool.h"

namespace hangar::db {

class SqliteGatewayStore : public GatewayStore {
 public:
  explicit SqliteGatewayStore(std::shared_ptr<SqlitePool> pool) : pool_(std::move(pool)) {}

  Result<int64_t> CreateRoute(const RouteRecord& r) override;
  Result<std::optional<RouteRecord>> GetRoute(const std::string& name) override;
  Result<std::vector<RouteRecord>> ListRoutes(const RouteQuery& q) override;
  Result<void> UpdateRoute(const RouteRecord& r) override;
  Result<void> DeleteRoute(int64_t id) override;

 private:
  std::shared_ptr<SqlitePool> pool_;
};

}  // namespace hangar::db

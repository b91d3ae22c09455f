#pragma once
// SqlGatewayStore: GatewayStore over a Pool (tables of migration 9). Thread-safe;
// a route and its backends are written in one transaction.

#include <memory>

#include "db/gateway_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlGatewayStore : public GatewayStore {
 public:
  explicit SqlGatewayStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<int64_t> CreateRoute(const RouteRecord& r) override;
  Result<std::optional<RouteRecord>> GetRoute(const std::string& name) override;
  Result<std::vector<RouteRecord>> ListRoutes(const RouteQuery& q) override;
  Result<void> UpdateRoute(const RouteRecord& r) override;
  Result<void> DeleteRoute(int64_t id) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

// SqlGatewayStore (db/gateway_store.h): routes with their backends in order, names unique,
// updates replacing the backends, visibility following the route's model, and routes going
// with their model.

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class GatewayStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    UserRecord u;
    u.name = "alice";
    alice_ = users().CreateUser(u).value().id;
    public_ = Model("fraud", false);
    private_ = Model("secret", true);
  }
  int64_t Model(const std::string& name, bool is_private) {
    ModelRecord m;
    m.name = name;
    m.owner_id = alice_;
    m.is_private = is_private;
    m.created_at = 1;
    return registry().CreateModel(m).value();
  }
  RouteRecord Route(const std::string& name, int64_t model) {
    RouteRecord r;
    r.name = name;
    r.model_id = model;
    r.target_alias = "champion";
    r.protocol = "openai";
    r.created_at = r.updated_at = 5;
    r.backends = {{"url", "http://127.0.0.1:9001", 90}, {"url", "http://127.0.0.1:9002", 10}};
    return r;
  }
  std::vector<std::string> Names(const RouteQuery& q) {
    auto routes = gateway().ListRoutes(q);
    EXPECT_TRUE(routes.has_value());
    std::vector<std::string> out;
    if (routes)
      for (const auto& r : *routes) out.push_back(r.name);
    return out;
  }
  int64_t alice_ = 0, public_ = 0, private_ = 0;
};

TEST_P(GatewayStoreTest, CreatesAndReadsARouteWithItsBackends) {
  ASSERT_TRUE(gateway().CreateRoute(Route("fraud-chat", public_)).has_value());
  auto got = gateway().GetRoute("fraud-chat").value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->model, "fraud");
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->target_alias, "champion");
  ASSERT_EQ(got->backends.size(), 2u);
  EXPECT_EQ(got->backends[0].target, "http://127.0.0.1:9001");
  EXPECT_EQ(got->backends[1].weight, 10);
  EXPECT_FALSE(gateway().GetRoute("nope").value().has_value());
  EXPECT_EQ(gateway().CreateRoute(Route("fraud-chat", public_)).error().code, ErrorCode::Conflict);
  EXPECT_EQ(gateway().CreateRoute(Route("other", 9999)).error().code, ErrorCode::NotFound);
}

TEST_P(GatewayStoreTest, UpdatesReplaceTheBackends) {
  int64_t id = gateway().CreateRoute(Route("r", public_)).value();
  RouteRecord r = Route("r", public_);
  r.id = id;
  r.target_alias = "";
  r.target_version = 3;
  r.backends = {{"url", "http://127.0.0.1:9003", 100}};
  r.updated_at = 9;
  ASSERT_TRUE(gateway().UpdateRoute(r).has_value());
  auto got = gateway().GetRoute("r").value().value();
  EXPECT_EQ(got.target_version, 3);
  EXPECT_EQ(got.updated_at, 9);
  ASSERT_EQ(got.backends.size(), 1u);
  EXPECT_EQ(got.backends[0].target, "http://127.0.0.1:9003");
  r.id = 9999;
  EXPECT_EQ(gateway().UpdateRoute(r).error().code, ErrorCode::NotFound);
}

TEST_P(GatewayStoreTest, ListsFollowTheModelsVisibilityAndGoWithTheModel) {
  ASSERT_TRUE(gateway().CreateRoute(Route("b-public", public_)).has_value());
  ASSERT_TRUE(gateway().CreateRoute(Route("a-secret", private_)).has_value());
  RouteQuery all;
  all.include_all_private = true;
  EXPECT_EQ(Names(all), (std::vector<std::string>{"a-secret", "b-public"}));
  EXPECT_EQ(Names(RouteQuery{}), (std::vector<std::string>{"b-public"}));
  RouteQuery owner;
  owner.readable_owner_ids = {alice_};
  EXPECT_EQ(Names(owner).size(), 2u);
  EXPECT_TRUE(gateway().GetRoute("a-secret").value()->model_private);
  ASSERT_TRUE(registry().DeleteModel(private_).has_value());
  EXPECT_FALSE(gateway().GetRoute("a-secret").value().has_value());
  int64_t id = gateway().GetRoute("b-public").value()->id;
  ASSERT_TRUE(gateway().DeleteRoute(id).has_value());
  EXPECT_EQ(gateway().DeleteRoute(id).error().code, ErrorCode::NotFound);
}

INSTANTIATE_TEST_SUITE_P(Engines, GatewayStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

// api/gateway (gateway_routes.cc) in process (TestHub): routes following a model's alias
// switch when the alias moves, who may change them, private models' routes, and bad input.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

class GatewayRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "bert");
    c1_ = hub_.Commit("alice", "models/alice/bert", {{"model.onnx", "v1"}});
    c2_ = hub_.Commit("alice", "models/alice/bert", {{"model.onnx", "v2"}});
    for (const std::string& c : {c1_, c2_})
      ASSERT_EQ(Send(Method::Post, "/api/v1/models",
                     json::object{{"name", "fraud"}, {"repo", "alice/bert"}, {"revision", c}})
                    .status,
                201);
  }
  Answer Send(Method m, const std::string& target, const json::value& body,
              const std::string& as = "alice") {
    return hub_.PostJson(target, json::serialize(body), as, m);
  }
  static json::object Route(const std::string& name) {
    return json::object{
        {"name", name},
        {"model", "fraud"},
        {"alias", "champion"},
        {"backends", json::array{json::object{{"url", "http://127.0.0.1:9001"}, {"weight", 90}},
                                 json::object{{"url", "http://127.0.0.1:9002"}, {"weight", 10}}}}};
  }
  TestHub hub_;
  std::string c1_, c2_;
};

TEST_F(GatewayRoutesTest, ARouteFollowsItsAliasWhenItMoves) {
  Answer created = Send(Method::Post, "/api/v1/gateway/routes", Route("fraud-chat"));
  ASSERT_EQ(created.status, 201) << created.body;
  auto r = created.Json();
  EXPECT_TRUE(r["version"].is_null());  // champion names nothing yet
  EXPECT_FALSE(r["problem"].as_string().empty());
  EXPECT_EQ(r["backends"].as_array()[1].as_object()["weight"], 10);
  ASSERT_EQ(Send(Method::Put, "/api/v1/models/fraud/aliases/champion", json::object{{"version", 1}})
                .status,
            200);
  auto now = hub_.Get("/api/v1/gateway/routes/fraud-chat").Json();
  EXPECT_EQ(now["version"], 1);
  EXPECT_EQ(now["commit"], json::value(c1_));
  ASSERT_EQ(Send(Method::Put, "/api/v1/models/fraud/aliases/champion", json::object{{"version", 2}})
                .status,
            200);
  auto list = hub_.Get("/api/v1/gateway/routes").Json();
  ASSERT_EQ(list["routes"].as_array().size(), 1u);
  EXPECT_EQ(list["routes"].as_array()[0].as_object()["commit"], json::value(c2_));
  // Pinned to a version instead: it stays.
  json::object pinned = Route("fraud-v1");
  pinned.erase("alias");
  pinned["version"] = 1;
  ASSERT_EQ(Send(Method::Post, "/api/v1/gateway/routes", pinned).status, 201);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes/fraud-v1").Json()["commit"], json::value(c1_));
}

TEST_F(GatewayRoutesTest, OnlySiteAdminsChangeRoutes) {
  EXPECT_EQ(Send(Method::Post, "/api/v1/gateway/routes", Route("r"), "").status, 401);
  EXPECT_EQ(Send(Method::Post, "/api/v1/gateway/routes", Route("r"), "alice:read").status, 403);
  EXPECT_EQ(Send(Method::Post, "/api/v1/gateway/routes", Route("r"), "bob").status, 403);
  ASSERT_EQ(Send(Method::Post, "/api/v1/gateway/routes", Route("r")).status, 201);
  EXPECT_EQ(Send(Method::Put, "/api/v1/gateway/routes/r", Route("r"), "bob").status, 403);
  EXPECT_EQ(hub_.Send({Method::Delete, "/api/v1/gateway/routes/r", "bob", {}, ""}).status, 403);
  Answer seen = hub_.Get("/api/v1/gateway/routes/r", "bob");  // a public model's
  EXPECT_EQ(seen.status, 200);
  // The infrastructure's hosts are the admins' to see.
  EXPECT_FALSE(seen.Json()["backends"].as_array()[0].as_object().contains("url"));
  EXPECT_TRUE(hub_.Get("/api/v1/gateway/routes/r", "alice")
                  .Json()["backends"]
                  .as_array()[0]
                  .as_object()
                  .contains("url"));
  json::object changed = Route("r");
  changed["retries"] = 3;
  Answer put = Send(Method::Put, "/api/v1/gateway/routes/r", changed);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.Json()["retries"], 3);
  EXPECT_EQ(hub_.Send({Method::Delete, "/api/v1/gateway/routes/r", "alice", {}, ""}).status, 200);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes/r").status, 404);
}

TEST_F(GatewayRoutesTest, APrivateModelsRouteIsHidden) {
  hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub_.Commit("alice", "models/alice/secret", {{"w", "x"}});
  ASSERT_EQ(Send(Method::Post, "/api/v1/models",
                 json::object{{"name", "hidden"}, {"repo", "alice/secret"}})
                .status,
            201);
  json::object r = Route("hidden-chat");
  r["model"] = "hidden";
  ASSERT_EQ(Send(Method::Post, "/api/v1/gateway/routes", r).status, 201);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes/hidden-chat", "bob").status, 404);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes/hidden-chat").status, 404);
  EXPECT_TRUE(hub_.Get("/api/v1/gateway/routes", "bob").Json()["routes"].as_array().empty());
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes", "alice").Json()["routes"].as_array().size(), 1u);
}

TEST_F(GatewayRoutesTest, BadRoutesAreRefusedAndNothingIsWritten) {
  auto refused = [&](json::object r) {
    return Send(Method::Post, "/api/v1/gateway/routes", r).status;
  };
  auto with = [&](const char* key, json::value v) {
    json::object r = Route("bad");
    r[key] = std::move(v);
    return r;
  };
  auto backend = [&](json::object b) { return with("backends", json::array{std::move(b)}); };
  EXPECT_EQ(refused(with("name", "a/b")), 400);
  EXPECT_EQ(refused(with("model", "nope")), 404);
  EXPECT_EQ(refused(with("protocol", "grpc")), 400);
  EXPECT_EQ(refused(with("version", 1)), 400);  // an alias and a version
  EXPECT_EQ(refused(with("alias", "")), 400);   // neither
  EXPECT_EQ(refused(with("timeout_ms", 0)), 400);
  EXPECT_EQ(refused(with("retries", 99)), 400);
  EXPECT_EQ(refused(with("retries", -1)), 400);
  EXPECT_EQ(refused(with("fallback", "bad")), 400);  // itself
  EXPECT_EQ(refused(with("backends", json::array{})), 400);
  EXPECT_EQ(refused(with("backends", "http://x")), 400);
  EXPECT_EQ(refused(backend({{"url", "file:///etc/passwd"}})), 400);
  EXPECT_EQ(refused(backend({{"url", "http://user:pw@10.0.0.1/"}})), 400);
  EXPECT_EQ(refused(backend({{"url", "http://a b/"}})), 400);
  EXPECT_EQ(refused(backend({{"url", "http://"}})), 400);
  EXPECT_EQ(refused(backend({{"url", "http://127.0.0.1:9001"}, {"weight", 0}})), 400);
  EXPECT_EQ(refused(backend({{"url", "http://127.0.0.1:9001"}, {"weight", 101}})), 400);
  EXPECT_EQ(refused(backend({{"kind", "runtime"}, {"url", "onnx"}})), 400);
  json::array many;
  for (int i = 0; i < 17; ++i) many.push_back(json::object{{"url", "http://127.0.0.1:9001"}});
  EXPECT_EQ(refused(with("backends", many)), 400);
  EXPECT_EQ(Send(Method::Post, "/api/v1/gateway/routes", json::string("[")).status, 400);
  json::object v9 = Route("bad");
  v9.erase("alias");
  v9["version"] = 9;
  EXPECT_EQ(refused(v9), 404);
  EXPECT_TRUE(hub_.Get("/api/v1/gateway/routes").Json()["routes"].as_array().empty());
  ASSERT_EQ(refused(Route("ok")), 201);
  EXPECT_EQ(refused(Route("ok")), 409);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes?limit=0").status, 400);
  EXPECT_EQ(hub_.Get("/api/v1/gateway/routes?limit=x").status, 400);
}

// OpenAI's list of models is the routes the key's user may see, in OpenAI's shapes.
TEST_F(GatewayRoutesTest, OpenAiModelsListsTheRoutes) {
  ASSERT_EQ(Send(Method::Post, "/api/v1/gateway/routes", Route("fraud-chat")).status, 201);
  Answer anon = hub_.Get("/v1/models");
  EXPECT_EQ(anon.status, 401);
  EXPECT_EQ(anon.Json()["error"].as_object()["type"], "authentication_error");
  Answer list = hub_.Get("/v1/models", "bob");
  ASSERT_EQ(list.status, 200) << list.body;
  auto body = list.Json();
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].as_array().size(), 1u);
  auto model = body["data"].as_array()[0].as_object();
  EXPECT_EQ(model["id"], "fraud-chat");
  EXPECT_EQ(model["object"], "model");
  EXPECT_EQ(model["owned_by"], "alice");
}

}  // namespace
}  // namespace hangar::api

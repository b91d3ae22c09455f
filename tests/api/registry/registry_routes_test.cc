// api/registry (registry_routes.cc) in process (TestHub): registering a model version from a
// repo commit, aliases and their audit log, who may move them, private repos' models, the
// listings' pages and filters, and bad input.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

class RegistryRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "bert");
    c1_ = hub_.Commit("alice", "models/alice/bert", {{"model.onnx", "v1"}});
    c2_ = hub_.Commit("alice", "models/alice/bert", {{"model.onnx", "v2"}});
  }
  Answer Post(const std::string& target, const json::value& body, const std::string& as = "alice",
              Method m = Method::Post) {
    return hub_.PostJson(target, json::serialize(body), as, m);
  }
  // Registers alice/bert at `revision` as a version of `name`; returns its number.
  int64_t Register(const std::string& name, const std::string& revision) {
    Answer a = Post("/api/v1/models",
                    json::object{{"name", name}, {"repo", "alice/bert"}, {"revision", revision}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.Json()["version"].as_object()["version"].as_int64();
  }
  TestHub hub_;
  std::string c1_, c2_;
};

TEST_F(RegistryRoutesTest, HealthAnswers) {
  Answer a = hub_.Get("/health");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.Json()["status"], "ok");
}

TEST_F(RegistryRoutesTest, RegistersAVersionPinnedAtTheRevisionsCommit) {
  Answer a = Post("/api/v1/models", json::object{{"name", "fraud"},
                                                 {"description", "scores payments"},
                                                 {"tags", {{"team", "risk"}}},
                                                 {"repo", "alice/bert"},
                                                 {"revision", "main"},
                                                 {"run_link", "https://ci.example/7"}});
  ASSERT_EQ(a.status, 201) << a.body;
  auto body = a.Json();
  auto model = body["model"].as_object();
  EXPECT_EQ(model["owner"], "alice");
  EXPECT_EQ(model["created_by"], "alice");
  EXPECT_EQ(model["tags"].as_object()["team"], "risk");
  auto v = body["version"].as_object();
  EXPECT_EQ(v["version"], 1);
  EXPECT_EQ(v["commit"], json::value(c2_));  // main's head now
  EXPECT_EQ(v["uri"], json::value("alice/bert@" + c2_));
  EXPECT_EQ(v["stage"], "None");
  EXPECT_EQ(v["run_link"], "https://ci.example/7");
  // The pin does not move with the branch.
  hub_.Commit("alice", "models/alice/bert", {{"model.onnx", "v3"}});
  Answer got = hub_.Get("/api/v1/models/fraud/versions/1");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["commit"], json::value(c2_));
  // An older commit by its sha, then the model page lists both, newest first.
  EXPECT_EQ(Register("fraud", c1_), 2);
  auto detail = hub_.Get("/api/v1/models/fraud").Json();
  auto versions = detail["versions"].as_array();
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].as_object()["commit"], json::value(c1_));
  EXPECT_EQ(detail["description"], "scores payments");
}

TEST_F(RegistryRoutesTest, MovesAliasesAndLogsWhoMovedThem) {
  Register("fraud", c1_);
  Register("fraud", c2_);
  Answer set = Post("/api/v1/models/fraud/aliases/champion", json::object{{"version", 1}}, "alice",
                    Method::Put);
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_TRUE(set.Json()["previous"].is_null());
  Answer move = Post("/api/v1/models/fraud/aliases/champion", json::object{{"version", "2"}},
                     "alice", Method::Put);
  EXPECT_EQ(move.Json()["previous"], 1);
  auto model = hub_.Get("/api/v1/models/fraud").Json();
  EXPECT_EQ(model["aliases"].as_object()["champion"], 2);
  auto log = hub_.Get("/api/v1/models/fraud/aliases/log").Json()["events"].as_array();
  ASSERT_EQ(log.size(), 2u);
  // A next page is offered only when there is one.
  EXPECT_FALSE(
      hub_.Get("/api/v1/models/fraud/aliases/log?limit=1").Json()["next_before"].is_null());
  EXPECT_TRUE(hub_.Get("/api/v1/models/fraud/aliases/log?limit=2").Json()["next_before"].is_null());
  EXPECT_EQ(log[0].as_object()["from"], 1);
  EXPECT_EQ(log[0].as_object()["to"], 2);
  EXPECT_EQ(log[0].as_object()["actor"], "alice");
  Answer del =
      hub_.Send({Method::Delete, "/api/v1/models/fraud/aliases/champion", "alice", {}, ""});
  EXPECT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(hub_.Get("/api/v1/models/fraud/aliases/log?limit=1")
                .Json()["events"]
                .as_array()[0]
                .as_object()["to"],
            nullptr);
}

TEST_F(RegistryRoutesTest, OnlyAdminsAndDeployersMoveAliases) {
  Register("fraud", c1_);
  auto move = [&](const std::string& as) {
    return Post("/api/v1/models/fraud/aliases/champion", json::object{{"version", 1}}, as,
                Method::Put);
  };
  EXPECT_EQ(move("").status, 401);
  EXPECT_EQ(move("bob").status, 403);
  EXPECT_EQ(move("alice:read").status, 403);  // a read token writes nothing
  Answer grant = Post("/api/v1/models/fraud/roles/bob", json::object{{"role", "deployer"}}, "alice",
                      Method::Put);
  ASSERT_EQ(grant.status, 200) << grant.body;
  EXPECT_EQ(move("bob").status, 200);
  // A deployer moves aliases but registers nothing in alice's namespace.
  EXPECT_EQ(
      Post("/api/v1/models/fraud/versions", json::object{{"repo", "alice/bert"}}, "bob").status,
      403);
  EXPECT_EQ(
      Post("/api/v1/models/fraud/roles/bob", json::object{{"role", "owner"}}, "alice", Method::Put)
          .status,
      400);
  // Refusals changed nothing: one move, by bob.
  auto log = hub_.Get("/api/v1/models/fraud/aliases/log").Json()["events"].as_array();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].as_object()["actor"], "bob");
}

TEST_F(RegistryRoutesTest, AModelPinningAPrivateRepoIsHiddenLikeTheRepo) {
  hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub_.Commit("alice", "models/alice/secret", {{"w.bin", "x"}});
  Answer a = Post("/api/v1/models", json::object{{"name", "hidden"}, {"repo", "alice/secret"}});
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(a.Json()["model"].as_object()["private"], true);
  EXPECT_EQ(hub_.Get("/api/v1/models/hidden").status, 404);
  EXPECT_EQ(hub_.Get("/api/v1/models/hidden", "bob").status, 404);
  EXPECT_EQ(hub_.Get("/api/v1/models/hidden", "alice").status, 200);
  EXPECT_EQ(hub_.Get("/api/v1/models").Json()["models"].as_array().size(), 0u);
  EXPECT_EQ(hub_.Get("/api/v1/models", "alice").Json()["models"].as_array().size(), 1u);
  // bob cannot pin a repo he cannot read: it does not exist for him.
  Post("/api/v1/models", json::object{{"name", "bobs"}}, "bob");
  Answer pin = Post("/api/v1/models/bobs/versions", json::object{{"repo", "alice/secret"}}, "bob");
  EXPECT_EQ(pin.status, 404) << pin.body;
  EXPECT_EQ(pin.ErrorCode(), "RepoNotFound");
}

TEST_F(RegistryRoutesTest, ListsWithPagesAndFilters) {
  for (const char* name : {"alpha", "beta", "gamma"}) Register(name, c1_);
  Answer tagged =
      Post("/api/v1/models", json::object{{"name", "delta"}, {"tags", {{"task", "nlp"}}}});
  ASSERT_EQ(tagged.status, 201) << tagged.body;
  auto page = hub_.Get("/api/v1/models?limit=2").Json();
  ASSERT_EQ(page["models"].as_array().size(), 2u);
  EXPECT_EQ(page["models"].as_array()[0].as_object()["name"], "alpha");
  EXPECT_EQ(page["next_offset"], 2);
  auto last = hub_.Get("/api/v1/models?limit=2&offset=2").Json();
  EXPECT_EQ(last["models"].as_array().size(), 2u);
  EXPECT_TRUE(last["next_offset"].is_null());
  EXPECT_EQ(hub_.Get("/api/v1/models?search=AMM").Json()["models"].as_array().size(), 1u);
  EXPECT_EQ(hub_.Get("/api/v1/models?search=%25").Json()["models"].as_array().size(), 0u);
  EXPECT_EQ(hub_.Get("/api/v1/models?tag=task=nlp").Json()["models"].as_array().size(), 1u);
  EXPECT_EQ(hub_.Get("/api/v1/models?owner=bob").Json()["models"].as_array().size(), 0u);
  EXPECT_EQ(hub_.Get("/api/v1/models?limit=0").status, 400);
  EXPECT_EQ(hub_.Get("/api/v1/models?limit=abc").status, 400);
  EXPECT_EQ(hub_.Get("/api/v1/models?sort=size").status, 400);
}

TEST_F(RegistryRoutesTest, BadInputIsRefusedAndChangesNothing) {
  Register("fraud", c1_);
  auto status = [&](const std::string& target, const std::string& body, Method m = Method::Post) {
    return hub_.Send({m, target, "alice", {{"Content-Type", "application/json"}}, body});
  };
  EXPECT_EQ(status("/api/v1/models", "{not json").status, 400);
  EXPECT_EQ(status("/api/v1/models", "[]").status, 400);
  EXPECT_EQ(status("/api/v1/models", R"({"description": "no name"})").status, 400);
  EXPECT_EQ(status("/api/v1/models", R"({"name": "a/b"})").status, 400);
  EXPECT_EQ(status("/api/v1/models", R"({"name": "fraud"})").status, 409);  // exists
  EXPECT_EQ(status("/api/v1/models", R"({"name": "x", "tags": {"k": 1}})").status, 400);
  EXPECT_EQ(status("/api/v1/models", R"({"name": "x", "private": "yes"})").status, 400);
  EXPECT_EQ(status("/api/v1/models", std::string(2 << 20, ' ')).status, 413);
  Answer no_repo = status("/api/v1/models/fraud/versions", R"({"repo": "alice/none"})");
  EXPECT_EQ(no_repo.status, 404);
  Answer no_rev =
      status("/api/v1/models/fraud/versions", R"({"repo": "alice/bert", "revision": "nope"})");
  EXPECT_EQ(no_rev.status, 404);
  EXPECT_EQ(no_rev.ErrorCode(), "RevisionNotFound");
  EXPECT_EQ(status("/api/v1/models/fraud/versions", R"({"repo": "bert"})").status, 400);
  EXPECT_EQ(status("/api/v1/models/fraud/versions",
                   R"({"repo": "alice/bert", "datasets": ["alice/none"]})")
                .status,
            404);
  EXPECT_EQ(status("/api/v1/models/fraud/aliases/latest", R"({"version": 1})", Method::Put).status,
            400);
  EXPECT_EQ(status("/api/v1/models/fraud/aliases/v3", R"({"version": 1})", Method::Put).status,
            400);
  EXPECT_EQ(status("/api/v1/models/fraud/aliases/ok", R"({"version": 9})", Method::Put).status,
            404);
  EXPECT_EQ(status("/api/v1/models/fraud/aliases/ok", R"({"version": -1})", Method::Put).status,
            400);
  EXPECT_EQ(status("/api/v1/models/nope/aliases/ok", R"({"version": 1})", Method::Put).status, 404);
  EXPECT_EQ(hub_.Get("/api/v1/models/fraud/versions/0").status, 400);
  EXPECT_EQ(hub_.Get("/api/v1/models/fraud/versions/7").status, 404);
  // Nothing of the above was written.
  auto model = hub_.Get("/api/v1/models/fraud").Json();
  EXPECT_EQ(model["versions"].as_array().size(), 1u);
  EXPECT_TRUE(model["aliases"].as_object().empty());
  EXPECT_EQ(hub_.Get("/api/v1/models").Json()["models"].as_array().size(), 1u);
  EXPECT_TRUE(hub_.Get("/api/v1/models/fraud/aliases/log").Json()["events"].as_array().empty());
}

// Found by an adversarial run: a model must not turn public when what made it private goes.
TEST_F(RegistryRoutesTest, WhatMadeAModelPrivateKeepsItHidden) {
  hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub_.Commit("alice", "models/alice/secret", {{"w", "x"}});
  ASSERT_EQ(
      Post("/api/v1/models", json::object{{"name", "hidden"}, {"repo", "alice/secret"}}).status,
      201);
  Answer gone = hub_.PostJson("/api/repos/delete", R"({"name":"secret","organization":"alice"})",
                              "alice", Method::Delete);
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(hub_.Get("/api/v1/models/hidden").status, 404);  // its repo deleted: still hidden
  EXPECT_EQ(hub_.Get("/api/v1/models/hidden", "alice").status, 200);
  // A private training dataset hides the model that names it.
  hub_.CreateRepo("alice", "alice", "squad", "dataset", /*is_private=*/true);
  hub_.Commit("alice", "datasets/alice/squad", {{"train.csv", "a\n1\n"}});
  ASSERT_EQ(Post("/api/v1/models", json::object{{"name", "trained"},
                                                {"repo", "alice/bert"},
                                                {"datasets", json::array{"alice/squad"}}})
                .status,
            201);
  EXPECT_EQ(hub_.Get("/api/v1/models/trained").status, 404);
  EXPECT_TRUE(hub_.Get("/api/v1/models").Json()["models"].as_array().empty());
}

TEST_F(RegistryRoutesTest, AFailedRegistrationLeavesNoModel) {
  for (const char* body : {R"({"name": "half", "repo": "nobody/none"})",
                           R"({"name": "half", "repo": "alice/bert", "revision": "nope"})",
                           R"({"name": "half", "repo": "alice/bert", "base_model": "none/1"})"}) {
    Answer a = hub_.PostJson("/api/v1/models", body, "alice");
    EXPECT_EQ(a.status, 404) << body << a.body;
  }
  EXPECT_EQ(hub_.Get("/api/v1/models/half", "alice").status, 404);
  // Registering into an existing model with other settings is refused, not half-applied.
  Register("fraud", c1_);
  Answer other = Post("/api/v1/models",
                      json::object{{"name", "fraud"}, {"private", true}, {"repo", "alice/bert"}});
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(hub_.Get("/api/v1/models/fraud").Json()["versions"].as_array().size(), 1u);
  EXPECT_EQ(Register("fraud", c2_), 2);  // without settings: into it
}

TEST_F(RegistryRoutesTest, DeployersMoveStagesAndOnlyAdminsRename) {
  Register("fraud", c1_);
  ASSERT_TRUE(hub_.app().accounts().CreateOrg("acme", "alice").has_value());
  hub_.AddUser("carol");
  ASSERT_TRUE(hub_.app().accounts().AddMember("acme", "carol", db::OrgRole::Write).has_value());
  ASSERT_EQ(Post("/api/v1/models",
                 json::object{{"name", "churn"}, {"owner", "acme"}, {"repo", "alice/bert"}})
                .status,
            201);
  auto mlflow = [&](const std::string& path, const json::value& body, const std::string& as) {
    return hub_.PostJson("/api/2.0/mlflow/" + path, json::serialize(body), as);
  };
  // carol writes in acme but is no admin: she may not rename, nor move stages…
  EXPECT_EQ(mlflow("registered-models/rename", json::object{{"name", "churn"}, {"new_name", "c2"}},
                   "carol")
                .status,
            403);
  json::object prod{{"name", "churn"},
                    {"version", "1"},
                    {"stage", "Production"},
                    {"archive_existing_versions", false}};
  EXPECT_EQ(mlflow("model-versions/transition-stage", prod, "carol").status, 403);
  // … until she is a deployer of the model, which is all a stage move needs.
  ASSERT_EQ(Post("/api/v1/models/churn/roles/carol", json::object{{"role", "deployer"}}, "alice",
                 Method::Put)
                .status,
            200);
  EXPECT_EQ(mlflow("model-versions/transition-stage", prod, "carol").status, 200);
  EXPECT_EQ(hub_.PostJson("/api/v1/models/churn/roles/carol", "{}", "alice", Method::Put).status,
            400);
}

TEST_F(RegistryRoutesTest, RefusesAnOversizedBodyFromItsHeadAndLogsNoNoOpMove) {
  Answer big = hub_.Send({Method::Post,
                          "/api/v1/models",
                          "alice",
                          {{"Content-Type", "application/json"}, {"Content-Length", "2000000"}},
                          "{}"});
  EXPECT_EQ(big.status, 413) << big.body;
  Register("fraud", c1_);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(Post("/api/v1/models/fraud/aliases/champion", json::object{{"version", 1}}, "alice",
                   Method::Put)
                  .status,
              200);
  EXPECT_EQ(hub_.Get("/api/v1/models/fraud/aliases/log").Json()["events"].as_array().size(), 1u);
  EXPECT_EQ(hub_.Get("/api/v1/models?search=%01").status, 400);
}

// The hot reads are kept (api/response_cache.h) but never outlive a change of the
// registry, and each caller has their own.
TEST_F(RegistryRoutesTest, KeptAnswersFollowEveryChangeAndEveryCaller) {
  Register("fraud", c1_);
  auto aliases = [&](const std::string& as) {
    return hub_.Get("/api/v1/models?limit=5", as)
        .Json()["models"]
        .as_array()[0]
        .as_object()["aliases"]
        .as_object()
        .size();
  };
  EXPECT_EQ(aliases(""), 0u);
  EXPECT_EQ(aliases(""), 0u);  // kept
  ASSERT_EQ(Post("/api/v1/models/fraud/aliases/champion", json::object{{"version", 1}}, "alice",
                 Method::Put)
                .status,
            200);
  EXPECT_EQ(aliases(""), 1u);  // the move made it stale at once
  hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub_.Commit("alice", "models/alice/secret", {{"w", "x"}});
  ASSERT_EQ(
      Post("/api/v1/models", json::object{{"name", "aaa-hidden"}, {"repo", "alice/secret"}}).status,
      201);
  EXPECT_EQ(hub_.Get("/api/v1/models?limit=5", "alice").Json()["models"].as_array().size(), 2u);
  EXPECT_EQ(hub_.Get("/api/v1/models?limit=5", "bob").Json()["models"].as_array().size(), 1u);
  EXPECT_EQ(hub_.Get("/api/v1/models?limit=5").Json()["models"].as_array().size(), 1u);
}

}  // namespace
}  // namespace hangar::api

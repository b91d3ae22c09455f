// api/hf/hf_routes.cc in process (TestHub): every repo type reaches its handlers under its
// own prefix, each route's requirement is checked before its handler runs (with the HF
// error family's X-Error-Code), and a known path with another method is a 405 with Allow.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

TEST(HfRoutes, EveryRepoTypeUnderItsPrefix) {
  TestHub hub;
  for (const std::string type : {"model", "dataset", "space"}) {
    hub.CreateRepo("alice", "alice", "r-" + type, type);
    const std::string collection = type + "s";
    const std::string repo = "alice/r-" + type;
    Answer info = hub.Get("/api/" + collection + "/" + repo);
    ASSERT_EQ(info.status, 200) << type << ": " << info.body;
    EXPECT_EQ(json::parse(info.body).at("id").as_string(), repo);
    hub.Commit("alice", collection + "/" + repo, {{"f.txt", type}});
    // The file routes: models at the root, datasets and spaces under their collection.
    const std::string file_prefix = type == "model" ? "/" : "/" + collection + "/";
    Answer file = hub.Get(file_prefix + repo + "/resolve/main/f.txt");
    EXPECT_EQ(file.status, 200) << type;
    EXPECT_EQ(file.body, type);
    EXPECT_EQ(hub.Get(file_prefix + repo + "/raw/main/f.txt").body, type);
    EXPECT_EQ(hub.Get("/api/" + collection + "/" + repo + "/revision/main").status, 200);
    EXPECT_EQ(hub.Get("/api/" + collection + "/" + repo + "/tree/main").status, 200);
    EXPECT_EQ(hub.Get("/api/" + collection + "/" + repo + "/refs").status, 200);
    EXPECT_EQ(hub.Get("/api/" + collection + "/" + repo + "/commits/main").status, 200);
    // The listing of the collection names it; another collection's does not.
    EXPECT_NE(hub.Get("/api/" + collection).body.find(repo), std::string::npos) << type;
  }
  EXPECT_EQ(hub.Get("/api/datasets").body.find("alice/r-model"), std::string::npos);
  // A model's id under the datasets collection is another repo: not found.
  EXPECT_EQ(hub.Get("/api/datasets/alice/r-model").ErrorCode(), "RepoNotFound");
}

TEST(HfRoutes, RequirementsAreCheckedBeforeTheHandler) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "m");
  const std::string commit_body =
      "{\"key\":\"header\",\"value\":{\"summary\":\"x\"}}\n"
      "{\"key\":\"file\",\"value\":{\"path\":\"x\",\"content\":\"eA==\",\"encoding\":\"base64\"}}"
      "\n";
  auto commit = [&](const std::string& as) {
    return hub.Send({Method::Post,
                     "/api/models/alice/m/commit/main",
                     as,
                     {{"Content-Type", "application/x-ndjson"}},
                     commit_body});
  };
  EXPECT_EQ(commit("").status, 401);            // anonymous: credentials needed
  EXPECT_EQ(commit("alice:read").status, 403);  // a read token
  EXPECT_EQ(commit("bob").status, 403);         // a writer of another namespace
  EXPECT_EQ(commit("alice").status, 200);
  // whoami needs a credential; create needs a write role.
  EXPECT_EQ(hub.Get("/api/whoami-v2").status, 401);
  EXPECT_EQ(hub.Get("/api/whoami-v2", "bob:read").status, 200);
  Answer create = hub.PostJson("/api/repos/create", "{\"name\":\"n\"}", "bob:read");
  EXPECT_EQ(create.status, 403) << create.body;
  // Settings need admin of the repo: bob's write token is not enough.
  Answer settings =
      hub.PostJson("/api/models/alice/m/settings", "{\"private\":true}", "bob", Method::Put);
  EXPECT_EQ(settings.status, 403) << settings.body;
  // A commit body announced over the limit is refused from its head, before it is read.
  Answer big = hub.Send({Method::Post,
                         "/api/models/alice/m/commit/main",
                         "alice",
                         {{"Content-Type", "application/x-ndjson"},
                          {"Content-Length", std::to_string(uint64_t{1} << 40)}},
                         ""});
  EXPECT_EQ(big.status, 413) << big.body;
}

TEST(HfRoutes, WrongMethodIs405WithAllowAndUnknownPathsAre404) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "m");
  Answer wrong = hub.Send({Method::Delete, "/api/models/alice/m/commits/main", "alice", {}, ""});
  EXPECT_EQ(wrong.status, 405) << wrong.body;
  EXPECT_EQ(wrong.Header("Allow"), "GET, HEAD, OPTIONS");
  Answer branch = hub.Send({Method::Put, "/api/models/alice/m/branch/dev", "alice", {}, ""});
  EXPECT_EQ(branch.status, 405);
  EXPECT_EQ(branch.Header("Allow"), "POST, DELETE, OPTIONS");
  EXPECT_EQ(hub.Get("/api/models/alice/m/no-such-thing").status, 404);
  EXPECT_EQ(hub.Get("/api/unknown").status, 404);
}

}  // namespace
}  // namespace hangar::api

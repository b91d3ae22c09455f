// web/pages/registry_pages.cc in process (TestHub): the registry's list and model pages show
// versions with their pinned commits, aliases and the log of their moves; a private model's
// page is hidden like its repo.

#include <gtest/gtest.h>

#include "testing/test_hub.h"

namespace hangar::web {
namespace {

using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

TEST(RegistryPages, ShowVersionsAliasesAndTheirMoves) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "bert");
  std::string c1 = hub.Commit("alice", "models/alice/bert", {{"model.onnx", "v1"}});
  ASSERT_EQ(
      hub.PostJson("/api/v1/models",
                   R"({"name": "fraud", "description": "scores <payments>", "repo": "alice/bert"})",
                   "alice")
          .status,
      201);
  ASSERT_EQ(hub.PostJson("/api/v1/models/fraud/aliases/champion", R"({"version": 1})", "alice",
                         Method::Put)
                .status,
            200);
  Answer list = hub.Get("/registry");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find("href=\"/registry/fraud\""), std::string::npos);
  EXPECT_NE(list.body.find("champion → v1"), std::string::npos);
  Answer page = hub.Get("/registry/fraud");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("/alice/bert/tree/" + c1), std::string::npos);   // the pinned commit
  EXPECT_NE(page.body.find("scores &lt;payments&gt;"), std::string::npos);  // escaped
  EXPECT_NE(page.body.find("<td>champion</td>"), std::string::npos);        // the log's row
  EXPECT_EQ(page.body.find("No alias was moved yet"), std::string::npos);
  EXPECT_EQ(hub.Get("/registry/nope").status, 404);
  EXPECT_EQ(hub.Get("/registry?offset=x").status, 400);

  hub.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub.Commit("alice", "models/alice/secret", {{"w", "x"}});
  ASSERT_EQ(hub.PostJson("/api/v1/models", R"({"name": "hidden", "repo": "alice/secret"})", "alice")
                .status,
            201);
  EXPECT_EQ(hub.Get("/registry/hidden").status, 404);
  EXPECT_EQ(hub.Get("/registry/hidden", "bob:session").status, 404);
  EXPECT_EQ(hub.Get("/registry/hidden", "alice:session").status, 200);
  EXPECT_EQ(hub.Get("/registry").body.find("hidden"), std::string::npos);
}

}  // namespace
}  // namespace hangar::web

// api/hf (repo_handlers.cc, content_handlers.cc, ref_handlers.cc, commit_handlers.cc) in
// process (TestHub): the JSON the HF clients parse, and the X-Error-Code of each refusal.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

class HfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "m");
    commit_ = hub_.Commit("alice", "models/alice/m", {{"a.txt", "A"}, {"d/b.txt", "BB"}});
  }
  static json::value Json(const Answer& a) {
    boost::system::error_code ec;
    json::value v = json::parse(a.body, ec);
    EXPECT_FALSE(ec) << "not JSON: " << a.body;
    return v;
  }
  Answer Ndjson(const std::string& target, const std::string& body, const std::string& as) {
    return hub_.Send({Method::Post, target, as, {{"Content-Type", "application/x-ndjson"}}, body});
  }
  TestHub hub_;
  std::string commit_;
};

// repo_handlers.cc
TEST_F(HfTest, RepoInfoListWhoamiAndDuplicates) {
  json::value info = Json(hub_.Get("/api/models/alice/m"));
  EXPECT_EQ(info.at("id").as_string(), "alice/m");
  EXPECT_EQ(info.at("sha").as_string(), commit_);
  // a.txt, d/b.txt and the .gitattributes a new repo starts with
  EXPECT_EQ(info.at("siblings").as_array().size(), 3u);
  json::value list = Json(hub_.Get("/api/models?author=alice"));
  ASSERT_TRUE(list.is_array());
  EXPECT_EQ(list.as_array().size(), 1u);
  json::value me = Json(hub_.Get("/api/whoami-v2", "alice"));
  EXPECT_EQ(me.at("name").as_string(), "alice");
  EXPECT_EQ(hub_.Get("/api/whoami-v2").status, 401);
  Answer again = hub_.PostJson("/api/repos/create", R"({"name":"m","type":"model"})", "alice");
  EXPECT_EQ(again.status, 409);
  Answer foreign =
      hub_.PostJson("/api/repos/create", R"({"name":"x","organization":"alice"})", "bob");
  EXPECT_EQ(foreign.status, 403);
  EXPECT_EQ(hub_.PostJson("/api/repos/create", "{not json", "alice").status, 400);
}

TEST_F(HfTest, MoveAndDelete) {
  Answer moved = hub_.PostJson(
      "/api/repos/move", R"({"fromRepo":"alice/m","toRepo":"alice/n","type":"model"})", "alice");
  EXPECT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(hub_.Get("/api/models/alice/n").status, 200);
  Answer gone =
      hub_.PostJson("/api/repos/delete", R"({"name":"n","type":"model"})", "alice", Method::Delete);
  EXPECT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(hub_.Get("/api/models/alice/n").ErrorCode(), "RepoNotFound");
}

// content_handlers.cc
TEST_F(HfTest, TreeAndPathsInfo) {
  json::value tree = Json(hub_.Get("/api/models/alice/m/tree/main"));
  ASSERT_TRUE(tree.is_array());
  EXPECT_EQ(tree.as_array().size(), 3u);  // .gitattributes, a.txt and d
  json::value deep = Json(hub_.Get("/api/models/alice/m/tree/main?recursive=true"));
  EXPECT_EQ(deep.as_array().size(), 4u);
  Answer missing = hub_.Get("/api/models/alice/m/tree/main/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.ErrorCode(), "EntryNotFound");
  Answer info = hub_.Send({Method::Post,
                           "/api/models/alice/m/paths-info/main",
                           "",
                           {{"Content-Type", "application/x-www-form-urlencoded"}},
                           "paths=a.txt&paths=none"});
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(Json(info).as_array().size(), 1u);
}

// ref_handlers.cc
TEST_F(HfTest, BranchesTagsAndRefs) {
  EXPECT_EQ(hub_.PostJson("/api/models/alice/m/branch/dev", "{}", "alice").status, 200);
  EXPECT_EQ(hub_.PostJson("/api/models/alice/m/branch/dev", "{}", "alice").status, 409);
  EXPECT_EQ(hub_.PostJson("/api/models/alice/m/tag/main", R"({"tag":"v1"})", "alice").status, 200);
  json::value refs = Json(hub_.Get("/api/models/alice/m/refs"));
  EXPECT_EQ(refs.at("branches").as_array().size(), 2u);
  EXPECT_EQ(refs.at("tags").as_array().size(), 1u);
  EXPECT_EQ(hub_.PostJson("/api/models/alice/m/branch/dev", "{}", "bob").status, 403);
  Answer del = hub_.Send({Method::Delete, "/api/models/alice/m/branch/dev", "alice", {}, {}});
  EXPECT_EQ(del.status, 200) << del.body;
  Answer bad = hub_.PostJson("/api/models/alice/m/branch/a..b", "{}", "alice");
  EXPECT_EQ(bad.status, 400) << bad.body;
}

TEST_F(HfTest, Commits) {
  json::value log = Json(hub_.Get("/api/models/alice/m/commits/main"));
  ASSERT_TRUE(log.is_array());
  EXPECT_EQ(log.as_array().at(0).at("id").as_string(), commit_);
  EXPECT_EQ(hub_.Get("/api/models/alice/m/commits/nope").ErrorCode(), "RevisionNotFound");
}

// commit_handlers.cc
TEST_F(HfTest, CommitPreuploadAndBadBodies) {
  Answer pre = hub_.PostJson("/api/models/alice/m/preupload/main",
                             R"({"files":[{"path":"x.bin","size":10,"sample":""}]})", "alice");
  ASSERT_EQ(pre.status, 200) << pre.body;
  EXPECT_EQ(Json(pre).at("files").as_array().size(), 1u);
  std::string header = R"({"key":"header","value":{"summary":"s"}})";
  Answer deleted =
      Ndjson("/api/models/alice/m/commit/main",
             header + "\n" + R"({"key":"deletedFile","value":{"path":"a.txt"}})" + "\n", "alice");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(hub_.Head("/alice/m/resolve/main/a.txt").status, 404);
  // Refused, and nothing committed: the branch still points at the last good commit.
  std::string before = std::string(Json(hub_.Get("/api/models/alice/m")).at("sha").as_string());
  for (const std::string& body :
       {std::string("{not json\n"), header + "\n" + header + "\n",
        header + "\n" +
            R"({"key":"file","value":{"path":"../x","content":"","encoding":"base64"}})",
        header + "\n" +
            R"({"key":"file","value":{"path":"y","content":"!!","encoding":"base64"}})"}) {
    Answer a = Ndjson("/api/models/alice/m/commit/main", body, "alice");
    EXPECT_EQ(a.status, 400) << body << " → " << a.body;
  }
  EXPECT_EQ(Json(hub_.Get("/api/models/alice/m")).at("sha").as_string(), before);
  EXPECT_EQ(Ndjson("/api/models/alice/m/commit/main", header + "\n", "alice:read").status, 403);
}

}  // namespace
}  // namespace hangar::api

// api/uploads/upload_routes.cc in process (TestHub): the native resumable upload API of
// docs/uploads.md — create, put parts, resume, complete, abort — and its refusals.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/sha256.h"
#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

class UploadsTest : public ::testing::Test {
 protected:
  void SetUp() override { hub_.CreateRepo("alice", "alice", "m"); }
  Answer Create(const std::string& bytes, const std::string& as, const std::string& extra = "") {
    return hub_.PostJson("/api/models/alice/m/uploads",
                         R"({"sha256":")" + Sha256::Of(bytes).Hex() + R"(","size":)" +
                             std::to_string(bytes.size()) + extra + "}",
                         as);
  }
  static json::object Json(const Answer& a) { return json::parse(a.body).as_object(); }
  TestHub hub_;
};

TEST_F(UploadsTest, CreatePutCompleteThenPresent) {
  const std::string bytes(5000, 'z');
  Answer made = Create(bytes, "alice");
  ASSERT_EQ(made.status, 201) << made.body;
  json::object up = Json(made);
  std::string id(up.at("id").as_string());
  ASSERT_EQ(up.at("partUrls").as_array().size(), 1u);
  Answer put = hub_.Send({Method::Put, "/api/uploads/" + id + "/parts/1", "alice", {}, bytes});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_FALSE(Json(put).at("etag").as_string().empty());
  // The same create again resumes the session, with the part listed.
  Answer again = Create(bytes, "alice");
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Json(again).at("parts").as_array().size(), 1u);
  Answer done = hub_.Send({Method::Post, "/api/uploads/" + id + "/complete", "alice", {}, {}});
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Json(done).at("state").as_string(), "complete");
  EXPECT_EQ(Json(Create(bytes, "alice")).at("state").as_string(), "present");
}

TEST_F(UploadsTest, WrongBytesFailTheCompleteAndKeepNothing) {
  const std::string bytes(100, 'a');
  json::object up = Json(Create(bytes, "alice"));
  std::string id(up.at("id").as_string());
  Answer put = hub_.Send(
      {Method::Put, "/api/uploads/" + id + "/parts/1", "alice", {}, std::string(100, 'b')});
  ASSERT_EQ(put.status, 200) << put.body;
  Answer done = hub_.Send({Method::Post, "/api/uploads/" + id + "/complete", "alice", {}, {}});
  EXPECT_EQ(done.status, 400) << done.body;
  EXPECT_NE(Json(Create(bytes, "alice")).at("state").as_string(), "present");
}

TEST_F(UploadsTest, BadCreatesAndForeignSessions) {
  EXPECT_EQ(
      hub_.PostJson("/api/models/alice/m/uploads", R"({"sha256":"x","size":1})", "alice").status,
      400);
  EXPECT_EQ(Create("abc", "alice", R"(,"partSize":0)").status, 400);
  EXPECT_EQ(hub_.PostJson("/api/models/alice/m/uploads", "{not json", "alice").status, 400);
  EXPECT_EQ(Create("abc", "bob").status, 403);
  json::object up = Json(Create("abc", "alice"));
  std::string id(up.at("id").as_string());
  EXPECT_EQ(hub_.Get("/api/uploads/" + id, "bob").status, 404);  // not bob's to see
  EXPECT_EQ(hub_.Send({Method::Put, "/api/uploads/" + id + "/parts/1", "bob", {}, "abc"}).status,
            404);
  EXPECT_EQ(hub_.Get("/api/uploads/not-an-id", "alice").status, 404);
  // A part of the wrong size is refused from its head.
  EXPECT_EQ(
      hub_.Send({Method::Put, "/api/uploads/" + id + "/parts/1", "alice", {}, "abcdef"}).status,
      400);
}

TEST_F(UploadsTest, AbortForgetsTheSession) {
  json::object up = Json(Create("abc", "alice"));
  std::string id(up.at("id").as_string());
  EXPECT_EQ(hub_.Send({Method::Delete, "/api/uploads/" + id, "alice", {}, {}}).status, 204);
  EXPECT_EQ(hub_.Get("/api/uploads/" + id, "alice").status, 404);
}

}  // namespace
}  // namespace hangar::api

// api/hf/resolve_handler.cc in process (TestHub): GET/HEAD /resolve and /raw — headers the
// HF clients read, Range and conditional requests, private repos and bad revisions.

#include <gtest/gtest.h>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

using hangar::testing::Answer;
using hangar::testing::Call;
using hangar::testing::TestHub;
using http::Method;

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "m");
    commit_ = hub_.Commit("alice", "models/alice/m", {{"config.json", "0123456789"}});
  }
  TestHub hub_;
  std::string commit_;
};

TEST_F(ResolveTest, HeadGivesTheHeadersHuggingfaceHubReads) {
  Answer a = hub_.Head("/alice/m/resolve/main/config.json");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.Header("X-Repo-Commit"), commit_);
  EXPECT_FALSE(a.Header("ETag").empty());
  EXPECT_EQ(a.content_length, 10u);
  EXPECT_TRUE(a.body.empty());
}

TEST_F(ResolveTest, GetServesTheBytes) {
  Answer a = hub_.Get("/alice/m/resolve/main/config.json");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "0123456789");
  EXPECT_NE(a.Header("Content-Disposition").find("config.json"), std::string::npos);
}

TEST_F(ResolveTest, ResolveByCommitSha) {
  Answer a = hub_.Get("/alice/m/resolve/" + commit_ + "/config.json");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "0123456789");
}

TEST_F(ResolveTest, Ranges) {
  auto get = [&](const std::string& range) {
    return hub_.Send(
        {Method::Get, "/alice/m/resolve/main/config.json", "", {{"Range", range}}, {}});
  };
  Answer a = get("bytes=2-4");
  EXPECT_EQ(a.status, 206);
  EXPECT_EQ(a.body, "234");
  EXPECT_EQ(a.Header("Content-Range"), "bytes 2-4/10");
  a = get("bytes=-3");  // suffix
  EXPECT_EQ(a.status, 206);
  EXPECT_EQ(a.body, "789");
  a = get("bytes=5-3");  // invalid: ignored, the whole file (RFC 9110 §14.2)
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "0123456789");
  a = get("bytes=20-");  // unsatisfiable
  EXPECT_EQ(a.status, 416);
  EXPECT_EQ(a.Header("Content-Range"), "bytes */10");
  a = get("bytes=0-1,4-5");  // multi-range: served whole
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body.size(), 10u);
}

TEST_F(ResolveTest, IfNoneMatchWithTheEtagIs304) {
  std::string etag = hub_.Head("/alice/m/resolve/main/config.json").Header("ETag");
  ASSERT_FALSE(etag.empty());
  Answer a = hub_.Send(
      {Method::Get, "/alice/m/resolve/main/config.json", "", {{"If-None-Match", etag}}, {}});
  EXPECT_EQ(a.status, 304);
  EXPECT_TRUE(a.body.empty());
  a = hub_.Send(
      {Method::Get, "/alice/m/resolve/main/config.json", "", {{"If-None-Match", "\"other\""}}, {}});
  EXPECT_EQ(a.status, 200);
}

TEST_F(ResolveTest, MissingFileRevisionAndRepo) {
  Answer a = hub_.Head("/alice/m/resolve/main/nope.json");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(a.ErrorCode(), "EntryNotFound");
  a = hub_.Head("/alice/m/resolve/no-such-branch/config.json");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(a.ErrorCode(), "RevisionNotFound");
  a = hub_.Head("/alice/none/resolve/main/config.json");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(a.ErrorCode(), "RepoNotFound");
}

TEST_F(ResolveTest, TraversalInThePathIsRefused) {
  Answer a = hub_.Get("/alice/m/resolve/main/../../etc/passwd");
  EXPECT_GE(a.status, 400);
  EXPECT_LT(a.status, 500);
  EXPECT_EQ(a.body.find("root:"), std::string::npos);
}

TEST_F(ResolveTest, PrivateRepoIsHiddenFromOthers) {
  hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  hub_.Commit("alice", "models/alice/secret", {{"a.txt", "hidden"}});
  EXPECT_EQ(hub_.Get("/alice/secret/resolve/main/a.txt", "alice").body, "hidden");
  for (const char* who : {"", "bob"}) {
    Answer a = hub_.Get("/alice/secret/resolve/main/a.txt", who);
    EXPECT_EQ(a.status, 404) << who;
    EXPECT_EQ(a.ErrorCode(), "RepoNotFound") << who;
    EXPECT_EQ(a.body.find("hidden"), std::string::npos);
  }
}

TEST_F(ResolveTest, RawServesTextInline) {
  Answer a = hub_.Get("/alice/m/raw/main/config.json");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "0123456789");
}

}  // namespace
}  // namespace hangar::api

// api/lfs/lfs_routes.cc in process (TestHub): the batch and verify routes of every repo
// type, the challenge an anonymous git-lfs gets, the transfer routes' own checks from the
// request head (forged tickets, a part of another upload, an unframed part), the locks
// routes, and a 405 with Allow.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/lfs/lfs_handlers.h"
#include "core/sha256.h"
#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

// The LFS media type, as the handlers send it.
const std::string kLfsJson(lfs::kLfsMediaType);

Answer Batch(TestHub& hub, const std::string& repo_path, const std::string& as,
             const std::string& op, const std::string& oid, int64_t size) {
  json::object req{{"operation", op},
                   {"objects", json::array{json::object{{"oid", oid}, {"size", size}}}}};
  return hub.Send({Method::Post,
                   repo_path + ".git/info/lfs/objects/batch",
                   as,
                   {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                   json::serialize(req)});
}

TEST(LfsRoutes, BatchAndVerifyForEveryRepoType) {
  TestHub hub;
  const std::string bytes = "lfs bytes";
  const std::string oid = Sha256::Of(bytes).Hex();
  for (const std::string type : {"model", "dataset", "space"}) {
    hub.CreateRepo("alice", "alice", "r-" + type, type);
    const std::string path = (type == "model" ? "/" : "/" + type + "s/") + "alice/r-" + type;
    Answer batch = Batch(hub, path, "alice", "upload", oid, 9);
    ASSERT_EQ(batch.status, 200) << type << ": " << batch.body;
    EXPECT_EQ(batch.Header("Content-Type"), kLfsJson);
    json::object actions = json::parse(batch.body).at("objects").at(0).at("actions").as_object();
    std::string href(actions.at("upload").at("href").as_string());
    Answer put = hub.Send({Method::Put, href.substr(href.find("/lfs-objects/")), "", {}, bytes});
    EXPECT_EQ(put.status, 200) << type << ": " << put.body;
    std::string verify(actions.at("verify").at("href").as_string());
    Answer ok = hub.Send({Method::Post,
                          verify.substr(verify.find(path)),
                          "",
                          {{"Content-Type", kLfsJson}},
                          json::serialize(json::object{{"oid", oid}, {"size", 9}})});
    EXPECT_EQ(ok.status, 200) << type << ": " << ok.body;
  }
}

TEST(LfsRoutes, AnonymousGitLfsIsChallengedAndReadersMayNotUpload) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "secret", "model", true);
  const std::string oid = Sha256::Of("x").Hex();
  Answer anon = Batch(hub, "/alice/secret", "", "download", oid, 1);
  EXPECT_EQ(anon.status, 401) << anon.body;  // git-lfs then asks for credentials
  EXPECT_FALSE(anon.Header("LFS-Authenticate").empty() && anon.Header("WWW-Authenticate").empty());
  Answer reader = Batch(hub, "/alice/secret", "alice:read", "upload", oid, 1);
  EXPECT_EQ(reader.status, 403) << reader.body;
  EXPECT_EQ(Batch(hub, "/alice/secret", "bob", "download", oid, 1).status, 404);
}

TEST(LfsRoutes, TransferRoutesCheckTheirTicketFromTheHead) {
  TestHub hub("[limits]\nmultipart_threshold_bytes = 2048\nmultipart_chunk_bytes = 1024\n");
  hub.CreateRepo("alice", "alice", "m");
  const std::string oid = Sha256::Of("y").Hex();
  for (const std::string& target :
       {"/lfs-objects/upload/forged/" + oid, "/lfs-objects/download/forged/" + oid,
        "/lfs-multipart/forged/" + oid + "/" + std::string(32, 'a') + "/part/1",
        "/lfs-multipart/forged/" + oid + "/" + std::string(32, 'a') + "/complete"}) {
    Method m = target.find("/download/") != std::string::npos ? Method::Get
               : target.ends_with("/complete")                ? Method::Post
                                                              : Method::Put;
    // A body announced at 1 TiB: refused before a byte of it would be read.
    Answer a =
        hub.Send({m, target, "", {{"Content-Length", std::to_string(uint64_t{1} << 40)}}, ""});
    EXPECT_EQ(a.status, 403) << target << ": " << a.body;
  }
  // The verify route takes the upload ticket in its query instead of credentials.
  Answer verify = hub.Send({Method::Post,
                            "/alice/m.git/info/lfs/objects/verify?ticket=forged",
                            "",
                            {{"Content-Type", kLfsJson}},
                            "{}"});
  EXPECT_EQ(verify.status, 403) << verify.body;
}

TEST(LfsRoutes, LocksAnswerAndWrongMethodsAre405) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "m");
  Answer locks =
      hub.Send({Method::Get, "/alice/m.git/info/lfs/locks", "alice", {{"Accept", kLfsJson}}, ""});
  EXPECT_LT(locks.status, 500) << locks.body;
  EXPECT_NE(locks.status, 405);
  Answer wrong = hub.Send({Method::Get, "/alice/m.git/info/lfs/objects/batch", "alice", {}, ""});
  EXPECT_EQ(wrong.status, 405) << wrong.body;
  EXPECT_EQ(wrong.Header("Allow"), "POST, OPTIONS");
}

}  // namespace
}  // namespace hangar::api

// api/oci (oci_routes.cc, blob_handlers.cc, manifest_handlers.cc, token_handler.cc) in
// process (TestHub): the registry's challenge, a monolithic blob push, HEAD/GET with Range
// (OCI's own 416 policy), a wrong digest, and a manifest that names a missing blob.

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/base64.h"
#include "core/sha256.h"
#include "testing/test_hub.h"

namespace hangar::api {
namespace {

using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;

const std::string kBlob = "0123456789abcdef";

class OciTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "m");
    basic_ = "Basic " + Base64Encode("alice:" + hub_.Token("alice"));
  }
  Answer Send(Method m, const std::string& target, std::string body = "",
              std::vector<std::pair<std::string, std::string>> headers = {}) {
    headers.emplace_back("Authorization", basic_);
    return hub_.Send({m, target, "", std::move(headers), std::move(body)});
  }
  std::string Push(const std::string& bytes) {
    std::string digest = "sha256:" + Sha256::Of(bytes).Hex();
    Answer a = Send(Method::Post, "/v2/alice/m/blobs/uploads/?digest=" + digest, bytes,
                    {{"Content-Type", "application/octet-stream"}});
    EXPECT_EQ(a.status, 201) << a.body;
    return digest;
  }
  TestHub hub_;
  std::string basic_;
};

TEST_F(OciTest, AnonymousGetsTheChallenge) {
  Answer a = hub_.Get("/v2/");
  EXPECT_EQ(a.status, 401);
  EXPECT_FALSE(a.Header("WWW-Authenticate").empty());
}

// token_handler.cc: the challenge's realm gives a registry token for Basic hub credentials,
// scoped to what the user may do; the token then opens the registry without Basic.
TEST_F(OciTest, TokenRealmIssuesScopedTokens) {
  Answer challenge = hub_.Get("/v2/");  // anonymous: the challenge
  std::string www = challenge.Header("WWW-Authenticate");
  ASSERT_TRUE(www.starts_with("Bearer realm=")) << www;  // the default: token auth
  // The service the challenge names, as a client sends it back.
  size_t at = www.find("service=\"");
  ASSERT_NE(at, std::string::npos) << www;
  std::string service = www.substr(at + 9, www.find('"', at + 9) - at - 9);
  Answer t =
      Send(Method::Get, "/v2/token?service=" + service + "&scope=repository:alice/m:pull,push");
  ASSERT_EQ(t.status, 200) << t.body;
  auto body = boost::json::parse(t.body).as_object();
  std::string token(body.at("token").as_string());
  EXPECT_EQ(body.at("access_token").as_string(), token);
  EXPECT_GT(body.at("expires_in").as_int64(), 0);
  Answer listed = hub_.Send(
      {Method::Get, "/v2/alice/m/tags/list", "", {{"Authorization", "Bearer " + token}}, {}});
  EXPECT_NE(listed.status, 401) << listed.body;
  Answer wrong = hub_.Send({Method::Get,
                            "/v2/token?service=" + service + "&scope=repository:alice/m:pull",
                            "",
                            {{"Authorization", "Basic " + Base64Encode("alice:wrong")}},
                            {}});
  EXPECT_EQ(wrong.status, 401) << wrong.body;
  Answer forged = hub_.Send(
      {Method::Get, "/v2/alice/m/tags/list", "", {{"Authorization", "Bearer not.a.token"}}, {}});
  EXPECT_EQ(forged.status, 401) << forged.body;
}

TEST_F(OciTest, PushHeadGetAndRanges) {
  std::string digest = Push(kBlob);
  Answer h = Send(Method::Head, "/v2/alice/m/blobs/" + digest);
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.Header("Docker-Content-Digest"), digest);
  EXPECT_EQ(h.content_length, kBlob.size());
  Answer g = Send(Method::Get, "/v2/alice/m/blobs/" + digest);
  EXPECT_EQ(g.status, 200);
  EXPECT_EQ(g.body, kBlob);
  Answer r = Send(Method::Get, "/v2/alice/m/blobs/" + digest, "", {{"Range", "bytes=2-5"}});
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, "2345");
  r = Send(Method::Get, "/v2/alice/m/blobs/" + digest, "", {{"Range", "bytes=-4"}});
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, "cdef");
  // OCI's policy: an invalid range is 416, where HF and LFS serve the whole blob.
  r = Send(Method::Get, "/v2/alice/m/blobs/" + digest, "", {{"Range", "bytes=5-3"}});
  EXPECT_EQ(r.status, 416);
}

TEST_F(OciTest, AWrongDigestIsRefusedAndNothingIsKept) {
  std::string claimed = "sha256:" + Sha256::Of("other bytes").Hex();
  Answer a = Send(Method::Post, "/v2/alice/m/blobs/uploads/?digest=" + claimed, kBlob,
                  {{"Content-Type", "application/octet-stream"}});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("DIGEST_INVALID"), std::string::npos) << a.body;
  EXPECT_EQ(Send(Method::Head, "/v2/alice/m/blobs/" + claimed).status, 404);
}

TEST_F(OciTest, AManifestNamingAMissingBlobIsRefused) {
  std::string config = Push("{}");
  std::string missing = "sha256:" + Sha256::Of("never pushed").Hex();
  std::string manifest =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
      R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
      config +
      R"(","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar",)"
      R"("digest":")" +
      missing + R"(","size":12}]})";
  Answer a = Send(Method::Put, "/v2/alice/m/manifests/v1", manifest,
                  {{"Content-Type", "application/vnd.oci.image.manifest.v1+json"}});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("MANIFEST_BLOB_UNKNOWN"), std::string::npos) << a.body;
  EXPECT_EQ(Send(Method::Head, "/v2/alice/m/manifests/v1").status, 404);
}

TEST_F(OciTest, MalformedManifestIs400) {
  Answer a = Send(Method::Put, "/v2/alice/m/manifests/v1", "{not json",
                  {{"Content-Type", "application/vnd.oci.image.manifest.v1+json"}});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("MANIFEST_INVALID"), std::string::npos) << a.body;
}

}  // namespace
}  // namespace hangar::api

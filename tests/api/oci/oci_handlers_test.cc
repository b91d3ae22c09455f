// api/oci (oci_routes.cc, blob_handlers.cc, manifest_handlers.cc, token_handler.cc) in
// process (TestHub): the registry's challenge, a monolithic blob push, HEAD/GET with Range
// (OCI's own 416 policy), a wrong digest, and a manifest that names a missing blob.

#include <gtest/gtest.h>

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
      config + R"(","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar",)"
               R"("digest":")" + missing + R"(","size":12}]})";
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

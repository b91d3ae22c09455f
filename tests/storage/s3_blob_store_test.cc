// What only S3BlobStore has: presigned URLs (AWS's published example, and fetched from
// the RADOS gateway), direct part uploads, bucket checks, its XML reading. The BlobStore
// contract itself runs in blob_store_conformance_test.cc (built into this binary, on the
// same gateway).

#include <gtest/gtest.h>

#include <set>

#include "core/util.h"
#include "net/http_client.h"
#include "s3_testing.h"
#include "storage/s3/s3_sigv4_presign.h"
#include "storage/s3/s3_xml.h"

namespace hangar::storage {
namespace {

TEST(S3Presign, MatchesAwsDocumentedExample) {
  // "Authenticating Requests: Using Query Parameters", example presigned URL.
  net::AwsSigV4 creds{"us-east-1", "AKIAIOSFODNN7EXAMPLE",
                      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
  std::string url = PresignUrl("GET", "https://examplebucket.s3.amazonaws.com", "/test.txt", {},
                               creds, std::chrono::seconds(86400), 1369353600);
  EXPECT_EQ(url,
            "https://examplebucket.s3.amazonaws.com/test.txt"
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            "&X-Amz-Signature="
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(S3Presign, EncodingAndCanonicalQuery) {
  EXPECT_EQ(AwsUriEncode("a b/c~d+e", true), "a%20b/c~d%2Be");
  EXPECT_EQ(AwsUriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(CanonicalQuery({{"uploadId", "x/y="}, {"partNumber", "2"}, {"uploads", ""}}),
            "partNumber=2&uploadId=x%2Fy%3D&uploads=");
}

TEST(S3Xml, ElementsTextAndEntities) {
  std::string xml =
      "<ListBucketResult><KeyCount>2</KeyCount><Contents><Key>a&amp;b</Key><Size>3</Size>"
      "</Contents><Contents><Key>c&#x41;&#66;</Key><Size>4</Size></Contents><Empty/>"
      "</ListBucketResult>";
  auto contents = s3xml::Elements(xml, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(s3xml::Text(contents[0], "Key"), "a&b");
  EXPECT_EQ(s3xml::Text(contents[1], "Key"), "cAB");
  EXPECT_EQ(s3xml::Text(xml, "KeyCount"), "2");
  EXPECT_EQ(s3xml::Text(xml, "Empty"), "");
  EXPECT_FALSE(s3xml::Text(xml, "Missing").has_value());
  EXPECT_EQ(s3xml::Escape("<a&\"b>"), "&lt;a&amp;&quot;b&gt;");
}

TEST(S3BlobStore, RedirectUrlServesTheBlobWithoutCredentials) {
  auto store = s3_testing::MakeStore();
  const std::string content = "presigned bytes";
  Sha256 id = Sha256::Of(content);
  auto w = store->Create(id, content.size()).value();
  ASSERT_TRUE(w->Append({content.data(), content.size()}).has_value());
  ASSERT_TRUE(w->Commit().has_value());
  std::string url = store->RedirectUrl(id, std::chrono::seconds(300)).value();
  EXPECT_NE(url.find("/sha256/" + id.Hex() + "?"), std::string::npos) << url;
  EXPECT_NE(url.find("X-Amz-Expires=300"), std::string::npos) << url;
  auto [status, body] = s3_testing::Fetch(url);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, content);
}

TEST(S3BlobStore, DirectPartsThroughPresignedUrls) {
  S3Options o = s3_testing::FreshBucket();
  S3BlobStore plain(o);
  o.direct_parts = true;
  S3BlobStore store(o);
  const uint64_t part = 5 << 20;
  std::string content(part + 7, 'p');
  content[17] = 'q';
  Sha256 id = Sha256::Of(content);
  std::string h = store.BeginParts(RandomHex(16), content.size(), part).value();
  EXPECT_EQ(plain.PartUrl(h, 1, part, std::chrono::seconds(60)).value(), "");
  for (uint64_t n = 1; n <= 2; ++n) {
    std::string url = store.PartUrl(h, n, n == 1 ? part : 7, std::chrono::seconds(60)).value();
    ASSERT_NE(url.find("partNumber=" + std::to_string(n)), std::string::npos) << url;
    net::HttpClient client;
    net::HttpRequest req;
    req.method = "PUT";
    req.url = url;
    req.body_bytes = content.substr((n - 1) * part, part);
    auto res = client.Perform(req);
    ASSERT_TRUE(res.has_value());
    EXPECT_EQ(res->status, 200) << res->body;
  }
  auto parts = store.ListParts(h).value();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].size, 7u);
  EXPECT_EQ(parts[1].etag.find('"'), std::string::npos);
  ASSERT_TRUE(store.CompleteParts(h, id, content.size()).has_value());
  EXPECT_EQ(store.Stat(id).value(), content.size());
  EXPECT_EQ(s3_testing::Leftovers(store), 0u);
}

TEST(S3BlobStore, SmallPartSizesAreRefusedForSeveralParts) {
  auto store = s3_testing::MakeStore();
  auto r = store->BeginParts(RandomHex(16), 100, 10);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_NE(r.error().message.find("minimum"), std::string::npos);
  EXPECT_TRUE(store->BeginParts(RandomHex(16), 10, 10).has_value());  // one part: fine
  EXPECT_EQ(store->BeginParts("not-hex", 10, 10).error().code, ErrorCode::BadRequest);
}

TEST(S3BlobStore, CheckUsableNamesEndpointAndBucket) {
  S3Options o = s3_testing::FreshBucket();
  o.bucket = "no-such-bucket-" + RandomHex(4);
  auto r = S3BlobStore(o).CheckUsable();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_NE(r.error().message.find(o.endpoint), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(o.bucket), std::string::npos) << r.error().message;

  o.endpoint = "http://127.0.0.1:1";
  S3BlobStore down(o);
  r = down.CheckUsable();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_NE(r.error().message.find("not reachable"), std::string::npos) << r.error().message;
  EXPECT_EQ(down.Stat(Sha256::Of("x")).error().code, ErrorCode::Unavailable);
}

TEST(S3BlobStore, ForEachBlobListsAcrossPagesAndStaleListsAbandonedWrites) {
  auto store = s3_testing::MakeStore();
  std::set<std::string> want;
  for (int i = 0; i < 1005; ++i) {  // more than one ListObjectsV2 page (1000)
    std::string c = "blob " + std::to_string(i);
    auto w = store->Create(Sha256::Of(c), std::nullopt).value();
    ASSERT_TRUE(w->Append({c.data(), c.size()}).has_value());
    ASSERT_TRUE(w->Commit().has_value());
    want.insert(Sha256::Of(c).Hex());
  }
  std::set<std::string> got;
  int64_t now = NowUnix();
  ASSERT_TRUE(store
                  ->ForEachBlob([&](const BlobListing& b) -> Result<void> {
                    got.insert(b.id.Hex());
                    EXPECT_LE(std::abs(b.modified - now), 120);
                    return {};
                  })
                  .has_value());
  EXPECT_EQ(got, want);

  std::string h = store->BeginParts(RandomHex(16), 10, 10).value();
  EXPECT_TRUE(store->ListStaleParts(std::chrono::hours(1)).value().empty());
  auto stale = store->ListStaleParts(std::chrono::seconds(-60)).value();
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0], h);
  ASSERT_TRUE(store->AbortParts(h).has_value());
  ASSERT_TRUE(store->AbortParts(h).has_value());  // idempotent
  EXPECT_EQ(s3_testing::Leftovers(*store), 0u);
}

}  // namespace
}  // namespace hangar::storage

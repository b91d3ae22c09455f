// api/lfs (batch_handler.cc, transfer_handler.cc) in process (TestHub): a batch upload,
// the upload href it gives, the download href, Range on it, and the bad-input answers.

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
const std::string kContent = "lfs object bytes";

class LfsTest : public ::testing::Test {
 protected:
  void SetUp() override { hub_.CreateRepo("alice", "alice", "m"); }

  Answer Batch(const std::string& operation, const std::string& oid, uint64_t size,
               const std::string& as) {
    json::object req{{"operation", operation},
                     {"transfers", json::array{"basic"}},
                     {"objects", json::array{json::object{{"oid", oid}, {"size", size}}}}};
    return hub_.Send({Method::Post,
                      "/alice/m.git/info/lfs/objects/batch",
                      as,
                      {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                      json::serialize(req)});
  }

  // The path part of the first object's `action` href in a batch answer.
  static std::string Href(const Answer& batch, const char* action) {
    json::value v = json::parse(batch.body);
    std::string href(v.at("objects").at(0).at("actions").at(action).at("href").as_string());
    return href.substr(href.find('/', href.find("://") + 3));
  }

  TestHub hub_;
  const std::string oid_ = Sha256::Of(kContent).Hex();
};

TEST_F(LfsTest, UploadThenDownloadWithRange) {
  Answer a = Batch("upload", oid_, kContent.size(), "alice");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.Header("Content-Type"), kLfsJson);
  Answer put = hub_.Send({Method::Put, Href(a, "upload"), "", {}, kContent});
  ASSERT_EQ(put.status, 200) << put.body;

  Answer d = Batch("download", oid_, kContent.size(), "alice");
  ASSERT_EQ(d.status, 200) << d.body;
  std::string href = Href(d, "download");
  Answer got = hub_.Get(href);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, kContent);
  Answer part = hub_.Send({Method::Get, href, "", {{"Range", "bytes=4-9"}}, {}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, kContent.substr(4, 6));
  part = hub_.Send({Method::Get, href, "", {{"Range", "bytes=5-3"}}, {}});
  EXPECT_EQ(part.status, 200);  // an invalid range is ignored
  EXPECT_EQ(part.body, kContent);
}

TEST_F(LfsTest, AnUploadWhoseBytesAreNotTheOidIsRefused) {
  std::string wrong = Sha256::Of("something else").Hex();
  Answer a = Batch("upload", wrong, kContent.size(), "alice");
  ASSERT_EQ(a.status, 200) << a.body;
  Answer put = hub_.Send({Method::Put, Href(a, "upload"), "", {}, kContent});
  EXPECT_GE(put.status, 400);
  EXPECT_LT(put.status, 500);
  // Nothing was kept: a download batch finds no such object.
  Answer d = Batch("download", wrong, kContent.size(), "alice");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_TRUE(json::parse(d.body).at("objects").at(0).as_object().contains("error")) << d.body;
}

TEST_F(LfsTest, BadBatchBodies) {
  auto send = [&](const std::string& body, const std::string& as) {
    return hub_.Send({Method::Post,
                      "/alice/m.git/info/lfs/objects/batch",
                      as,
                      {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                      body});
  };
  // The LFS API answers a body it cannot use with 422 and a message (git-lfs.md §batch).
  for (const char* body : {"{not json", R"({"operation":"delete","objects":[]})"}) {
    Answer bad = send(body, "alice");
    EXPECT_EQ(bad.status, 422) << body;
    EXPECT_TRUE(json::parse(bad.body).as_object().contains("message")) << bad.body;
  }
  Answer a = Batch("upload", "not-an-oid", 1, "alice");
  ASSERT_EQ(a.status, 200) << a.body;  // per-object error, as the LFS API says
  EXPECT_EQ(json::parse(a.body).at("objects").at(0).at("error").at("code").as_int64(), 422);
}

TEST_F(LfsTest, UploadNeedsWriteAccess) {
  for (const char* who : {"", "bob", "alice:read"}) {
    Answer a = Batch("upload", oid_, kContent.size(), who);
    EXPECT_TRUE(a.status == 401 || a.status == 403) << who << ": " << a.status << " " << a.body;
  }
}

TEST_F(LfsTest, AForgedTicketIsRefused) {
  Answer put =
      hub_.Send({Method::Put, "/lfs-objects/upload/not-a-ticket/" + oid_, "", {}, kContent});
  EXPECT_EQ(put.status, 403) << put.body;
}

// multipart_handler.cc: an object over the threshold goes in parts (hf-api.md §7.4).
TEST(LfsMultipartTest, PartsThenCompleteThenDownload) {
  TestHub hub("[limits]\nmultipart_threshold_bytes = 2048\nmultipart_chunk_bytes = 1024\n");
  hub.CreateRepo("alice", "alice", "m");
  std::string bytes;
  for (int i = 0; i < 3000; ++i) bytes += static_cast<char>('a' + i % 26);
  const std::string oid = Sha256::Of(bytes).Hex();
  json::object req{{"operation", "upload"},
                   {"transfers", json::array{"basic", "multipart"}},
                   {"objects", json::array{json::object{{"oid", oid}, {"size", 3000}}}}};
  Answer batch = hub.Send({Method::Post,
                           "/alice/m.git/info/lfs/objects/batch",
                           "alice",
                           {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                           json::serialize(req)});
  ASSERT_EQ(batch.status, 200) << batch.body;
  json::object upload =
      json::parse(batch.body).at("objects").at(0).at("actions").at("upload").as_object();
  const json::object& header = upload.at("header").as_object();
  ASSERT_EQ(header.at("chunk_size").as_string(), "1024");
  auto path = [](const json::value& href) {
    std::string s(href.as_string());
    return s.substr(s.find('/', s.find("://") + 3));
  };
  // Refused from the head: a part of the wrong length, and the part URL of an upload that
  // is not this object's.
  const std::string part1 = path(header.at("1"));
  Answer short_part = hub.Send({Method::Put, part1, "", {}, bytes.substr(0, 1000)});
  EXPECT_EQ(short_part.status, 400) << short_part.body;
  EXPECT_NE(short_part.body.find("must be 1024 bytes"), std::string::npos) << short_part.body;
  std::string other_upload = part1;
  other_upload.replace(other_upload.find("/part/") - 32, 32, std::string(32, '0'));
  Answer unknown = hub.Send({Method::Put, other_upload, "", {}, bytes.substr(0, 1024)});
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  json::array parts;
  for (int n = 1; n <= 3; ++n) {
    Answer put = hub.Send({Method::Put,
                           path(header.at(std::to_string(n))),
                           "",
                           {},
                           bytes.substr((n - 1) * 1024, 1024)});
    ASSERT_EQ(put.status, 200) << put.body;
    parts.push_back(json::object{{"partNumber", n}, {"etag", put.Header("ETag")}});
  }
  // A PUT without body framing (a 0-byte body) is refused from its head, and the part
  // stored before stays: the completion below uses it.
  Answer unframed = hub.Send({Method::Put, part1, "", {}, ""});
  EXPECT_EQ(unframed.status, 400) << unframed.body;
  // A completion naming a part that was never sent is refused, and the upload stays open.
  json::array wrong = parts;
  wrong.push_back(json::object{{"partNumber", 4}, {"etag", "\"x\""}});
  Answer bad = hub.Send({Method::Post,
                         path(upload.at("href")),
                         "",
                         {{"Content-Type", "application/json"}},
                         json::serialize(json::object{{"oid", oid}, {"parts", wrong}})});
  EXPECT_EQ(bad.status, 400) << bad.body;
  Answer done = hub.Send({Method::Post,
                          path(upload.at("href")),
                          "",
                          {{"Content-Type", "application/json"}},
                          json::serialize(json::object{{"oid", oid}, {"parts", parts}})});
  ASSERT_EQ(done.status, 200) << done.body;
  req["operation"] = "download";
  Answer down = hub.Send({Method::Post,
                          "/alice/m.git/info/lfs/objects/batch",
                          "alice",
                          {{"Content-Type", kLfsJson}, {"Accept", kLfsJson}},
                          json::serialize(req)});
  ASSERT_EQ(down.status, 200) << down.body;
  EXPECT_EQ(
      hub
          .Get(path(
              json::parse(down.body).at("objects").at(0).at("actions").at("download").at("href")))
          .body,
      bytes);
}

}  // namespace
}  // namespace hangar::api

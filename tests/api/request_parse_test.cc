// The request parsers the handlers expose for their own tests and the fuzz targets
// (tests/fuzz): the NDJSON commit body, the LFS batch body, and the OCI chunk
// Content-Range (the Range parser is http's: tests/http/semantics_test.cc).

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include "api/hf/commit_body.h"
#include "api/hf/hf_handlers.h"
#include "api/lfs/lfs_handlers.h"
#include "api/oci/oci_handlers.h"
#include "core/base64.h"

namespace hangar::api {
namespace {

using namespace std::string_literals;

const std::string kOid(64, 'a');

TEST(ParseCommitBody, ReadsEveryOperationKind) {
  std::string body =
      "{\"key\":\"header\",\"value\":{\"summary\":\"s\",\"description\":\"d\"}}\r\n\n"
      "{\"key\":\"file\",\"value\":{\"path\":\"a.txt\",\"content\":\"aGk=\","
      "\"encoding\":\"base64\"}}\n"
      "{\"key\":\"lfsFile\",\"value\":{\"path\":\"w.bin\",\"algo\":\"sha256\",\"oid\":\"" +
      kOid +
      "\",\"size\":5}}\n"
      "{\"key\":\"deletedFolder\",\"value\":{\"path\":\"logs//\"}}\n"
      "{\"key\":\"copyFile\",\"value\":{\"path\":\"b\",\"srcPath\":\"a.txt\"}}";
  auto input = ParseCommitBody(body).value();
  EXPECT_EQ(input.summary, "s");
  EXPECT_EQ(input.description, "d");
  ASSERT_EQ(input.operations.size(), 4u);
  EXPECT_EQ(input.operations[0].content, "hi");
  EXPECT_EQ(input.operations[1].lfs_size, 5u);
  EXPECT_EQ(input.operations[2].path, "logs");
  EXPECT_EQ(input.operations[3].src_path, "a.txt");
  EXPECT_FALSE(input.operations[3].src_revision.has_value());
}

TEST(ParseCommitBody, NamesTheBadLine) {
  const std::string header = "{\"key\":\"header\",\"value\":{\"summary\":\"s\"}}\n";
  struct Case {
    std::string body;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "missing header line"},
           {"{\"key\":\"deletedFile\",\"value\":{\"path\":\"a\"}}", "header"},
           {header + "{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"ab=c\"}}",
            "line 2 content"},
           {header + "{\"key\":\"nope\",\"value\":{\"path\":\"a\"}}", "unknown key 'nope'"},
           {header + "not json", "line 2: malformed JSON"},
           {header + header, "line 2: a second header"}}) {
    auto r = ParseCommitBody(c.body);
    ASSERT_FALSE(r.has_value()) << c.body;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

// What a commit parses to, as one comparable string.
std::string Shown(const services::CommitInput& in) {
  std::string out =
      in.summary + "|" + in.description + "|" + (in.parent_commit ? in.parent_commit->Hex() : "-");
  for (const auto& op : in.operations) {
    out += "|" + std::to_string(static_cast<int>(op.kind)) + ":" + op.path + ":" + op.content +
           ":" + op.src_path + ":" + op.src_revision.value_or("-") + ":" +
           std::to_string(op.lfs_size.value_or(0));
  }
  return out;
}

TEST(CommitBodyParser, GivesTheSameCommitWhereverTheBodyIsCut) {
  // Long enough base64 that quanta, escapes and UTF-8 fall across the cuts.
  std::string content = "SGVsbG8sIHdvcmxkISDwn5iAIGxvbmdlciB0ZXh0IGZvciBjdXRz";
  std::string body =
      "{\"value\":{\"summary\":\"caf\u00e9 \\\"q\\\" \xc3\xa9\",\"parentCommit\":null},"
      "\"key\":\"header\"}\r\n"
      "{\"key\":\"file\",\"value\":{\"extra\":{\"path\":1},\"path\":\"d/a\\u0020b.txt\","
      "\"content\":\"" +
      content +
      "\",\"encoding\":\"base64\"}}\n"
      "  \n"
      "{\"key\":\"lfsFile\",\"value\":{\"path\":\"w.bin\",\"oid\":\"" +
      kOid +
      "\",\"size\":123456789}}\n"
      "{\"key\":\"copyFile\",\"value\":{\"path\":\"b\",\"srcPath\":\"a\",\"srcRevision\":\"v1\"}}"
      "\n";
  auto whole = ParseCommitBody(body);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(whole->summary, "caf\xc3\xa9 \"q\" \xc3\xa9");
  ASSERT_EQ(whole->operations.size(), 3u);
  EXPECT_EQ(whole->operations[0].path, "d/a b.txt");
  EXPECT_EQ(whole->operations[0].content, *Base64Decode(content));
  EXPECT_EQ(whole->operations[1].lfs_size, 123456789u);
  EXPECT_EQ(whole->operations[2].src_revision, "v1");
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    for (size_t second : {cut, std::min(body.size(), cut + 1), std::min(body.size(), cut + 5)}) {
      CommitBodyParser p;
      ASSERT_TRUE(p.Feed(std::string_view(body).substr(0, cut)).has_value()) << cut;
      ASSERT_TRUE(p.Feed(std::string_view(body).substr(cut, second - cut)).has_value()) << cut;
      ASSERT_TRUE(p.Feed(std::string_view(body).substr(second)).has_value()) << cut;
      auto got = std::move(p).Finish();
      ASSERT_TRUE(got.has_value()) << cut << ": " << got.error().message;
      EXPECT_EQ(Shown(*got), Shown(*whole)) << "cut at " << cut << " and " << second;
    }
  }
  CommitBodyParser bytewise;
  for (char c : body) ASSERT_TRUE(bytewise.Feed(std::string_view(&c, 1)).has_value());
  EXPECT_EQ(Shown(std::move(bytewise).Finish().value()), Shown(*whole));
}

TEST(CommitBodyParser, RefusesWhatTheWholeParseRefuses) {
  const std::string header = "{\"key\":\"header\",\"value\":{\"summary\":\"s\"}}\n";
  struct Case {
    std::string line;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"QQ==QQ==\"}}", "content"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"QQ=\"}}", "content"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"QUJD!\"}}", "content"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":7}}",
            "'content' must be a string"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\"}}", "'content' must be a string"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"\",\"encoding\":\"hex\"}}",
            "encoding"},
           {"{\"key\":\"file\",\"value\":{\"path\":[\"a\"],\"content\":\"\"}}",
            "'path' must be a string"},
           {"{\"key\":\"lfsFile\",\"value\":{\"path\":\"a\",\"oid\":\"" + kOid + "\",\"size\":-1}}",
            "'size'"},
           {"{\"key\":\"lfsFile\",\"value\":{\"path\":\"a\",\"oid\":\"" + kOid +
                "\",\"size\":1.5}}",
            "'size'"},
           {"{\"key\":7,\"value\":{}}", "'key' must be a string"},
           {"{\"key\":\"file\",\"value\":\"x\"}", "'value' must be an object"},
           {"[1,2]", "malformed JSON"},
           {"\"text\"", "malformed JSON"},
           {"{\"key\":\"file\"} trailing", "malformed JSON"},
           {"{\"key\":\"file\",\"value\":{\"path\":\"\xff\"}}", "malformed JSON"},
           {"{\"key\":\"file\",", "malformed JSON"},
       }) {
    auto r = ParseCommitBody(header + c.line);
    ASSERT_FALSE(r.has_value()) << c.line;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << c.line;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.line << ": " << r.error().message;
    EXPECT_NE(r.error().message.find("line 2"), std::string::npos) << r.error().message;
  }
}

TEST(CommitBodyParser, RefusesTwiceGivenMembersAndBadHeaders) {
  const std::string header = "{\"key\":\"header\",\"value\":{\"summary\":\"s\"}}\n";
  for (const std::string& line :
       {"{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"YQ==\",\"content\":\"Yg==\"}}"s,
        "{\"key\":\"file\",\"value\":{\"path\":\"a\",\"path\":\"b\",\"content\":\"\"}}"s,
        "{\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"\"},\"value\":{}}"s,
        "{\"key\":\"file\",\"key\":\"file\",\"value\":{\"path\":\"a\",\"content\":\"\"}}"s}) {
    auto r = ParseCommitBody(header + line);
    ASSERT_FALSE(r.has_value()) << line;
    EXPECT_NE(r.error().message.find("given twice"), std::string::npos) << r.error().message;
  }
  for (const std::string& h :
       {"{\"key\":\"header\",\"value\":{\"summary\":\"a\\u0000b\"}}"s,
        "{\"key\":\"header\",\"value\":{\"summary\":\"" + std::string(65537, 's') + "\"}}",
        "{\"key\":\"header\",\"value\":{\"summary\":\"s\",\"description\":\"" +
            std::string((1 << 20) + 1, 'd') + "\"}}"}) {
    auto r = ParseCommitBody(h);
    ASSERT_FALSE(r.has_value()) << h.substr(0, 80);
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  }
}

TEST(CommitBodyParser, RefusesWhatFollowsALinesObjectInAnotherPiece) {
  // The object ends exactly where a piece ends; the next piece carries more on that line.
  const std::string header = "{\"key\":\"header\",\"value\":{\"summary\":\"s\"}}\n";
  CommitBodyParser p;
  ASSERT_TRUE(p.Feed(header + "{\"key\":\"file\",\"value\":{\"path\":\"x1\",\"content\":\"YWJj\"}}")
                  .has_value());
  auto r = p.Feed("GARBAGE{\"key\":\"file\",\"value\":{\"path\":\"x2\",\"content\":\"ZGVm\"}}\n");
  if (r)
    r = std::move(p).Finish().has_value() ? Result<void>{} : MakeError(ErrorCode::BadRequest, "x");
  ASSERT_FALSE(r.has_value());
  CommitBodyParser blank;  // blanks after the object are fine
  ASSERT_TRUE(
      blank.Feed(header + "{\"key\":\"deletedFile\",\"value\":{\"path\":\"a\"}}").has_value());
  ASSERT_TRUE(blank.Feed("  \r\n").has_value());
  EXPECT_TRUE(std::move(blank).Finish().has_value());
}

TEST(ParseBatch, KeepsObjectsInOrderAndNamesBadFields) {
  auto ok = boost::json::parse(
                "{\"operation\":\"upload\",\"transfers\":[\"basic\"],"
                "\"objects\":[{\"oid\":\"x\",\"size\":1.0e3},"
                "{\"oid\":\"y\",\"size\":0}]}")
                .as_object();
  auto batch = lfs::ParseBatch(ok).value();
  EXPECT_EQ(batch.operation, services::LfsOperation::Upload);
  ASSERT_EQ(batch.objects.size(), 2u);
  EXPECT_EQ(batch.objects[0].size, 1000);
  EXPECT_EQ(batch.objects[1].oid, "y");
  auto bad = boost::json::parse(
                 "{\"operation\":\"download\",\"objects\":["
                 "{\"oid\":\"x\",\"size\":18446744073709551615}]}")
                 .as_object();
  auto r = lfs::ParseBatch(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
  EXPECT_EQ(r.error().message, "objects[0].size must be an integer");
}

TEST(ParseChunkRange, ReadsFirstAndLast) {
  auto r = oci::ParseChunkRange(" bytes 0-1048575 ").value();
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 1048575u);
  for (const char* bad : {"", "5", "a-b", "-5", "5-", "0-18446744073709551616"}) {
    EXPECT_EQ(oci::ParseChunkRange(bad).error().code, ErrorCode::BlobUploadInvalid) << bad;
  }
}

// A chunk of 2^64 bytes once had size last - first + 1 == 0, so with Content-Length: 0 an
// empty body was taken for it (tests/fuzz/corpus/http_headers/chunk_wraps).
TEST(ParseChunkRange, RefusesAChunkWhoseSizeWraps) {
  auto r = oci::ParseChunkRange("0-18446744073709551615");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BlobUploadInvalid);
  EXPECT_TRUE(oci::ParseChunkRange("1-18446744073709551615").has_value());
}

}  // namespace
}  // namespace hangar::api

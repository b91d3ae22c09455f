#include "http/request.h"

#include <gtest/gtest.h>

#include "testing/gzip.h"

#include "http/gzip_source.h"

namespace hangar::http {
namespace {

TEST(Request, QueryDecodingRepeatedAndBracketKeys) {
  Request r;
  r.query = "expand=author&expand%5B%5D=sha&search=a+b%20c&flag";
  EXPECT_EQ(r.QueryAll("expand"), (std::vector<std::string>{"author", "sha"}));
  EXPECT_EQ(r.Query("search"), "a b c");
  EXPECT_EQ(r.Query("flag"), "");
  EXPECT_FALSE(r.Query("missing").has_value());
}

TEST(Request, ParseBoolAcceptsClientSpellings) {
  for (auto t : {"true", "True", "TRUE", "1"}) EXPECT_EQ(ParseBool(t), true) << t;
  for (auto f : {"false", "False", "0"}) EXPECT_EQ(ParseBool(f), false) << f;
  EXPECT_FALSE(ParseBool("yes").has_value());
}

// A query value is percent-decoded before ParseBool sees it, so it may hold a NUL:
// "true%00x" once read as true (tests/fuzz/corpus/http_headers/bool_nul).
TEST(Request, ParseBoolRefusesTrailingBytesAfterANul) {
  EXPECT_FALSE(ParseBool(std::string_view("true\0x", 6)).has_value());
  EXPECT_FALSE(ParseBool(std::string_view("0\0", 2)).has_value());
  Request r;
  r.query = "create_pr=true%00x";
  EXPECT_FALSE(ParseBool(r.Query("create_pr").value()).has_value());
}

TEST(Request, ContentLengthMustBeANumber) {
  Request r;
  r.headers = {{"content-length", "12x"}};
  EXPECT_FALSE(r.ContentLength().has_value());
  r.headers = {{"content-length", "42"}};
  EXPECT_EQ(r.ContentLength(), 42u);
}

TEST(Request, DeclaredBodyLengthIsZeroWithoutFraming) {
  Request r;
  EXPECT_EQ(r.DeclaredBodyLength(), 0u);  // neither Content-Length nor Transfer-Encoding
  r.headers = {{"content-length", "42"}};
  EXPECT_EQ(r.DeclaredBodyLength(), 42u);
  r.headers = {{"transfer-encoding", "chunked"}};
  EXPECT_EQ(r.DeclaredBodyLength(), std::nullopt);
  r.headers = {{"content-length", "12x"}};
  EXPECT_EQ(r.DeclaredBodyLength(), std::nullopt);  // the server refuses it before this
}

using hangar::testing::Gzip;

TEST(GunzipSource, InflatesAndRejectsCorruptOrTruncated) {
  std::string text(100000, 'x');
  auto src = GunzipSource(std::make_shared<StringSource>(Gzip(text)));
  auto all = ReadAll(*src, 1 << 20);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(*all, text);

  std::string gz = Gzip(text);
  auto cut = GunzipSource(std::make_shared<StringSource>(gz.substr(0, gz.size() / 2)));
  auto r = ReadAll(*cut, 1 << 20);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);

  auto junk = GunzipSource(std::make_shared<StringSource>("not gzip at all"));
  EXPECT_EQ(ReadAll(*junk, 1 << 20).error().code, ErrorCode::BadRequest);

  auto bomb = GunzipSource(std::make_shared<StringSource>(Gzip(text)), 1000);
  EXPECT_EQ(ReadAll(*bomb, 1 << 20).error().code, ErrorCode::PayloadTooLarge);
}

}  // namespace
}  // namespace hangar::http

// HTTP semantics shared by every API family (issue 14): the Range parser and its policies,
// Content-Range, Content-Disposition and the conditional requests.

#include <gtest/gtest.h>

#include "http/preconditions.h"
#include "http/range.h"
#include "http/response.h"

namespace hangar::http {
namespace {

using Kind = RangeAnswer::Kind;

TEST(ParseRange, ReadsTheSingleRangeForms) {
  struct Case {
    const char* header;
    uint64_t size, offset, length;
  };
  for (const Case& c : {Case{"bytes=0-99", 1000, 0, 100}, Case{"bytes=-500", 1000, 500, 500},
                        Case{"bytes=900-", 1000, 900, 100}, Case{"bytes=5-5000", 10, 5, 5},
                        Case{"bytes=-50", 10, 0, 10}, Case{" bytes= 2 - 3 ", 10, 2, 2},
                        Case{"bytes=0-0", 1, 0, 1}, Case{"bytes=9-9", 10, 9, 1}}) {
    RangeAnswer r = ParseRange(c.header, c.size);
    ASSERT_EQ(r.kind, Kind::Partial) << c.header;
    EXPECT_EQ(r.offset, c.offset) << c.header;
    EXPECT_EQ(r.length, c.length) << c.header;
  }
}

TEST(ParseRange, ServesWholeWhatItMayIgnore) {
  for (const char* h : {"", "bytes=0-1,3-4", "items=0-1", "bytes=a-b", "bytes=1", "bytes=--1",
                        "bytes=-", "bytes=0-18446744073709551616", "bytes"}) {
    EXPECT_EQ(ParseRange(h, 10).kind, Kind::Whole) << h;
  }
}

TEST(ParseRange, RefusesRangesWithNoByteOfTheRepresentation) {
  for (const char* h : {"bytes=10-", "bytes=10-20", "bytes=-0"}) {
    EXPECT_EQ(ParseRange(h, 10).kind, Kind::Unsatisfiable) << h;
  }
  EXPECT_EQ(ParseRange("bytes=0-0", 0).kind, Kind::Unsatisfiable);
  EXPECT_EQ(ParseRange("bytes=-5", 0).kind, Kind::Unsatisfiable);
}

TEST(ParseRange, ABackwardsRangeIsThePolicys) {
  EXPECT_EQ(ParseRange("bytes=5-3", 10).kind, Kind::Whole);                             // HF, LFS
  EXPECT_EQ(ParseRange("bytes=5-3", 10, RangePolicy{true}).kind, Kind::Unsatisfiable);  // OCI
}

TEST(ContentRange, NamesTheWindowOrTheSize) {
  EXPECT_EQ(ContentRange({Kind::Partial, 5, 5}, 10), "bytes 5-9/10");
  EXPECT_EQ(ContentRange({Kind::Unsatisfiable}, 10), "bytes */10");
}

TEST(ContentDisposition, EncodesTheNameBothWays) {
  EXPECT_EQ(ContentDisposition("caf\xc3\xa9 \"x\".bin"),
            "inline; filename*=UTF-8''caf%C3%A9%20%22x%22.bin; filename=\"caf__ _x_.bin\";");
  EXPECT_EQ(ContentDisposition("a.tar.gz", true),
            "attachment; filename*=UTF-8''a.tar.gz; filename=\"a.tar.gz\";");
}

Request WithHeaders(Method m, std::vector<std::pair<std::string, std::string>> headers) {
  Request req;
  req.method = m;
  req.headers = std::move(headers);
  return req;
}

TEST(EvaluatePreconditions, FollowsRfc9110Order) {
  const std::string etag = "\"abc\"";
  struct Case {
    Method method;
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<int> want;
  };
  for (const Case& c : std::vector<Case>{
           {Method::Get, {}, std::nullopt},
           {Method::Get, {{"if-none-match", "\"abc\""}}, 304},
           {Method::Head, {{"if-none-match", "\"x\", W/\"abc\""}}, 304},  // weak comparison
           {Method::Get, {{"if-none-match", "*"}}, 304},
           {Method::Get, {{"if-none-match", "\"abcd\""}}, std::nullopt},
           {Method::Get, {{"if-none-match", "\"a,b\", \"abc\""}}, 304},  // commas in a tag
           {Method::Put, {{"if-none-match", "\"abc\""}}, 412},
           {Method::Get, {{"if-match", "\"abc\""}}, std::nullopt},
           {Method::Get, {{"if-match", "*"}}, std::nullopt},
           {Method::Get, {{"if-match", "W/\"abc\""}}, 412},  // strong comparison
           {Method::Get, {{"if-match", "\"other\""}}, 412},
           {Method::Get, {{"if-match", "\"other\""}, {"if-none-match", "\"abc\""}}, 412},
           {Method::Get, {{"if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT"}}, std::nullopt},
       }) {
    EXPECT_EQ(EvaluatePreconditions(WithHeaders(c.method, c.headers), etag), c.want)
        << (c.headers.empty() ? "" : c.headers[0].first + ": " + c.headers[0].second);
  }
}

TEST(RangeApplies, OnlyForTheSameStrongTag) {
  EXPECT_TRUE(RangeApplies(WithHeaders(Method::Get, {}), "\"abc\""));
  EXPECT_TRUE(RangeApplies(WithHeaders(Method::Get, {{"if-range", "\"abc\""}}), "\"abc\""));
  EXPECT_FALSE(RangeApplies(WithHeaders(Method::Get, {{"if-range", "\"old\""}}), "\"abc\""));
  EXPECT_FALSE(RangeApplies(WithHeaders(Method::Get, {{"if-range", "W/\"abc\""}}), "\"abc\""));
  EXPECT_FALSE(RangeApplies(
      WithHeaders(Method::Get, {{"if-range", "Sun, 06 Nov 1994 08:49:37 GMT"}}), "\"abc\""));
}

}  // namespace
}  // namespace hangar::http

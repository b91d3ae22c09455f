// api/json_util.cc and api/range_util.cc: the helpers every JSON API and every streaming
// handler share.

#include <gtest/gtest.h>

#include <memory>

#include "api/json_util.h"
#include "api/range_util.h"
#include "api/response_cache.h"
#include "core/byte_source.h"

namespace hangar::api {
namespace {

http::Request WithBody(std::string body) {
  http::Request req;
  req.headers.emplace_back("content-length", std::to_string(body.size()));
  req.body = std::make_shared<StringSource>(std::move(body));
  return req;
}

TEST(ReadJsonObject, ObjectsOnlyWithinTheLimit) {
  http::Request ok = WithBody(R"({"a":1})");
  auto o = ReadJsonObject(ok, 100);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->at("a").as_int64(), 1);
  http::Request arr = WithBody("[1]");
  EXPECT_EQ(ReadJsonObject(arr, 100).error().code, ErrorCode::BadRequest);
  http::Request bad = WithBody("{");
  EXPECT_EQ(ReadJsonObject(bad, 100, ErrorCode::Unprocessable).error().code,
            ErrorCode::Unprocessable);
  http::Request big = WithBody(R"({"a":"0123456789"})");
  EXPECT_EQ(ReadJsonObject(big, 5).error().code, ErrorCode::PayloadTooLarge);
}

TEST(JsonUtil, ResponsesFieldsIdsAndNextLinks) {
  http::Response r = JsonResponse(boost::json::object{{"x", true}}, 201);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body, R"({"x":true})");
  EXPECT_EQ(r.GetHeader("content-type"), "application/json");
  boost::json::object o{{"s", "v"}, {"n", 3}, {"z", nullptr}};
  EXPECT_EQ(*StringField(o, "s"), "v");
  EXPECT_EQ(*StringField(o, "absent"), "");
  EXPECT_EQ(*StringField(o, "z"), "");
  EXPECT_EQ(StringField(o, "n").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(ObjectId(255, 'r').size(), 24u);
  EXPECT_NE(ObjectId(1, 'r'), ObjectId(1, 'u'));
  // ParseObjectId reads back what ObjectId made, of its kind, and nothing else.
  for (int64_t id : {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{1} << 40, INT64_MAX}) {
    EXPECT_EQ(ParseObjectId(ObjectId(id, 'e'), 'e'), id) << id;
  }
  EXPECT_FALSE(ParseObjectId(ObjectId(7, 'e'), 'f').has_value()) << "another kind";
  for (const char* bad :
       {"", "e", "e0000000000000000000000", "e00000000000000000000000a", "E00000000000000000000007",
        "e0000000000000000000000G", "e000000000000000000000-7", "efffffffffffffffffffffff"}) {
    EXPECT_FALSE(ParseObjectId(bad, 'e').has_value()) << bad;
  }
  http::Request req;
  req.base_url = "http://hub";
  req.path = "/api/models";
  req.query = "limit=2&cursor=old&author=a";
  std::string next = NextPageUrl(req, "new");
  EXPECT_NE(next.find("http://hub/api/models?"), std::string::npos) << next;
  EXPECT_NE(next.find("cursor=new"), std::string::npos) << next;
  EXPECT_EQ(next.find("cursor=old"), std::string::npos) << next;
  EXPECT_NE(next.find("author=a"), std::string::npos) << next;
  http::Response page;
  SetNextLink(page, req, "new");
  EXPECT_EQ(page.GetHeader("Link"), "<" + next + ">; rel=\"next\"");
}

TEST(JsonUtil, LimitsAndAvatars) {
  http::Request req;
  EXPECT_EQ(LimitQuery(req, 100, 1000).value(), 100);
  for (auto [query, want] :
       {std::pair{"limit=1", 1}, std::pair{"limit=1000", 1000}, std::pair{"limit=007", 7}}) {
    req.query = query;
    EXPECT_EQ(LimitQuery(req, 100, 1000).value(), want) << query;
  }
  for (const char* bad :
       {"limit=0", "limit=1001", "limit=-1", "limit=x", "limit=", "limit=99999999999999999999"}) {
    req.query = bad;
    auto l = LimitQuery(req, 100, 1000);
    ASSERT_FALSE(l.has_value()) << bad;
    EXPECT_EQ(l.error().message, "'limit' is 1 to 1000");
  }
  EXPECT_EQ(AvatarUrl("ann"), "/avatars/ann.svg");
  EXPECT_EQ(AvatarUrl("a b"), "/avatars/a%20b.svg");
}

TEST(ChosenRange, WholeRangeIfRangeAndPolicies) {
  auto ask = [](std::string range, std::string if_range = "") {
    http::Request req;
    if (!range.empty()) req.headers.emplace_back("range", range);
    if (!if_range.empty()) req.headers.emplace_back("if-range", if_range);
    return req;
  };
  bool partial = true;
  http::Request none = ask("");
  auto all = ChosenRange(none, "\"e\"", 10, {}, partial);
  ASSERT_TRUE(all.has_value());
  EXPECT_FALSE(partial);
  EXPECT_EQ(all->offset, 0u);
  http::Request part = ask("bytes=2-4");
  auto r = ChosenRange(part, "\"e\"", 10, {}, partial);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(partial);
  EXPECT_EQ(r->offset, 2u);
  EXPECT_EQ(r->length, 3u);
  http::Request stale = ask("bytes=2-4", "\"other\"");  // If-Range names another tag
  ASSERT_TRUE(ChosenRange(stale, "\"e\"", 10, {}, partial).has_value());
  EXPECT_FALSE(partial);
  http::Request backwards = ask("bytes=5-3");
  ASSERT_TRUE(ChosenRange(backwards, "\"e\"", 10, {}, partial).has_value());
  EXPECT_FALSE(partial);
  EXPECT_EQ(ChosenRange(backwards, "\"e\"", 10, {.refuse_backwards = true}, partial).error().code,
            ErrorCode::RangeNotSatisfiable);
  http::Request past = ask("bytes=10-");
  EXPECT_EQ(ChosenRange(past, "\"e\"", 10, {}, partial).error().code,
            ErrorCode::RangeNotSatisfiable);
}

}  // namespace
}  // namespace hangar::api

namespace hangar::api {
namespace {

// response_cache.h: an answer is kept for its generation only, and large ones not at all
// (the cache's bytes stay bounded whatever callers ask).
TEST(ResponseCache, KeepsAnswersForTheirGenerationAndBoundsTheirSize) {
  ResponseCache cache(16, 60'000, 10);
  cache.Put("k", 1, "small");
  EXPECT_EQ(cache.Get("k", 1), std::optional<std::string>("small"));
  EXPECT_FALSE(cache.Get("k", 2).has_value());  // the state changed since
  cache.Put("big", 1, std::string(11, 'x'));
  EXPECT_FALSE(cache.Get("big", 1).has_value());
}

}  // namespace
}  // namespace hangar::api

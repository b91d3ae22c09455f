#include "web/web_util.h"

#include <gtest/gtest.h>

#include "core/byte_source.h"

namespace hangar::web {
namespace {

http::Request FormPost(std::string body, std::string cookie = {}) {
  http::Request req;
  req.method = http::Method::Post;
  req.base_url = "http://127.0.0.1:8080";
  req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
  if (!cookie.empty()) req.headers.emplace_back("cookie", cookie);
  req.body = std::make_shared<StringSource>(std::move(body));
  return req;
}

PageContext SignedIn() {
  PageContext ctx;
  ctx.signed_in = true;
  ctx.csrf = std::string(64, 'c');
  return ctx;
}

TEST(WebUtil, EscapeHtmlEscapesEveryMarkupCharacter) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\" onclick='y'>&amp;</a>"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml("données 模型"), "données 模型");
}

TEST(WebUtil, CookieValueFindsTheNamedCookie) {
  http::Request req;
  req.headers.emplace_back("cookie", "a=1; hangar_session=abc;  hangar_csrf=xyz");
  EXPECT_EQ(CookieValue(req, "hangar_session"), "abc");
  EXPECT_EQ(CookieValue(req, "hangar_csrf"), "xyz");
  EXPECT_EQ(CookieValue(req, "hangar"), "");
}

TEST(WebUtil, FormWithTheSessionTokenIsRead) {
  auto req = FormPost("_csrf=" + std::string(64, 'c') + "&name=a+b%26c&empty=&flag");
  auto form = ReadForm(req, SignedIn());
  ASSERT_TRUE(form.has_value()) << form.error().message;
  EXPECT_EQ(form->Get("name"), "a b&c");
  EXPECT_TRUE(form->Has("empty"));
  EXPECT_TRUE(form->Has("flag"));
  EXPECT_EQ(form->Get("missing"), "");
}

TEST(WebUtil, OnlyFieldsNamesAFieldThePageDoesNotOffer) {
  auto req = FormPost("_csrf=" + std::string(64, 'c') + "&private=1&gated=manual");
  auto form = ReadForm(req, SignedIn()).value();
  EXPECT_TRUE(form.OnlyFields({"private", "gated"}).has_value());
  auto refused = form.OnlyFields({"private"});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(refused.error().message, "unknown form field 'gated'");
}

TEST(WebUtil, FormsWithoutTheRightTokenAreForbidden) {
  for (std::string body : {std::string("name=x"), std::string("_csrf=&name=x"),
                           "_csrf=" + std::string(64, 'd'), "_csrf=" + std::string(63, 'c')}) {
    auto req = FormPost(body);
    auto form = ReadForm(req, SignedIn());
    ASSERT_FALSE(form.has_value()) << body;
    EXPECT_EQ(form.error().code, ErrorCode::Forbidden);
  }
}

TEST(WebUtil, CrossOriginPostsAreForbiddenEvenWithTheToken) {
  auto req = FormPost("_csrf=" + std::string(64, 'c'));
  req.headers.emplace_back("origin", "http://evil.example");
  auto form = ReadForm(req, SignedIn());
  ASSERT_FALSE(form.has_value());
  EXPECT_EQ(form.error().code, ErrorCode::Forbidden);
  auto same = FormPost("_csrf=" + std::string(64, 'c'));
  same.headers.emplace_back("origin", "http://127.0.0.1:8080");
  EXPECT_TRUE(ReadForm(same, SignedIn()).has_value());
}

TEST(WebUtil, AnonymousFormsNeedTheirCsrfCookie) {
  PageContext anon;
  anon.csrf = "0123456789abcdefghijABCDEFGHIJ01";  // as Begin() read it from the cookie
  auto ok = FormPost("_csrf=0123456789abcdefghijABCDEFGHIJ01");
  EXPECT_TRUE(ReadForm(ok, anon).has_value());
  // No cookie came with the request: Begin() minted a fresh token, which no form can carry.
  PageContext fresh = anon;
  fresh.set_csrf_cookie = fresh.csrf;
  auto req = FormPost("_csrf=0123456789abcdefghijABCDEFGHIJ01");
  EXPECT_EQ(ReadForm(req, fresh).error().code, ErrorCode::Forbidden);
}

TEST(WebUtil, MalformedFormsAreBadRequests) {
  auto bad = FormPost("_csrf=" + std::string(64, 'c') + "&x=%zz");
  EXPECT_EQ(ReadForm(bad, SignedIn()).error().code, ErrorCode::BadRequest);
  http::Request json = FormPost("{}");
  json.headers[0].second = "application/json";
  EXPECT_EQ(ReadForm(json, SignedIn()).error().code, ErrorCode::BadRequest);
  auto huge = FormPost("_csrf=" + std::string(64, 'c') + "&x=" + std::string(70000, 'a'));
  EXPECT_EQ(ReadForm(huge, SignedIn()).error().code, ErrorCode::PayloadTooLarge);
}

TEST(WebUtil, DecodedParamRefusesTraversalNulAndBadEscapes) {
  http::Request req;
  req.params = {{"ok", "a%20b/c%C3%A9"}, {"dots", "a/%2e%2e/b"}, {"nul", "a%00b"}, {"bad", "%G1"}};
  EXPECT_EQ(*DecodedParam(req, "ok"), "a b/cé");
  EXPECT_EQ(DecodedParam(req, "dots").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(DecodedParam(req, "nul").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(DecodedParam(req, "bad").error().code, ErrorCode::BadRequest);
}

TEST(WebUtil, UrlsAndSizes) {
  EXPECT_EQ(RepoPath(RepoId{RepoType::Dataset, "acme", "data"}), "/datasets/acme/data");
  EXPECT_EQ(RepoPath(RepoId{RepoType::Model, "acme", "bert"}), "/acme/bert");
  EXPECT_EQ(EncodeSegment("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(EncodePath("dir/a b#?.txt"), "dir/a%20b%23%3F.txt");
  EXPECT_EQ(HumanSize(999), "999 Bytes");
  EXPECT_EQ(HumanSize(1570), "1.57 kB");
  EXPECT_EQ(HumanSize(440'000'000), "440 MB");
}

}  // namespace
}  // namespace hangar::web

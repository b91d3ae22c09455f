#include "http/router.h"

#include <gtest/gtest.h>

namespace hangar::http {
namespace {

Request MakeRequest(Method m, std::string path) {
  Request r;
  r.method = m;
  r.method_name = m == Method::Get ? "GET" : m == Method::Post ? "POST" : "HEAD";
  r.path = std::move(path);
  r.body = std::make_shared<StringSource>("");
  r.request_id = "t1";
  return r;
}

Handler Echo(std::string tag) {
  return [tag](Request& req) -> Result<Response> {
    std::string out = tag;
    for (const auto& [k, v] : req.params) out += " " + k + "=" + v;
    return Response::Text(200, out);
  };
}

TEST(Router, MatchesParamsAndRestOnRawPath) {
  Router r;
  r.Add(Method::Get, "/api/models/{ns}/{name}", ApiFamily::Hf, Echo("info"));
  r.Add(Method::Get, "/{ns}/{name}/resolve/{rest*}", ApiFamily::Hf, Echo("resolve"));
  auto req = MakeRequest(Method::Get, "/acme/bert/resolve/refs%2Fpr%2F1/dir/a%20b.txt");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "resolve ns=acme name=bert rest=refs%2Fpr%2F1/dir/a%20b.txt");
  auto info = MakeRequest(Method::Get, "/api/models/acme/bert");
  EXPECT_EQ(r.Dispatch(info).body, "info ns=acme name=bert");
  EXPECT_EQ(info.Param("ns"), "acme");
}

TEST(Router, HeadFallsBackToGetAndRequestIdIsSet) {
  Router r;
  r.Add(Method::Get, "/healthz", ApiFamily::Plain, Echo("ok"));
  auto req = MakeRequest(Method::Head, "/healthz");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
}

TEST(Router, UnknownPathIs404AndWrongMethodIs405) {
  Router r;
  r.Add(Method::Post, "/api/repos/create", ApiFamily::Hf, Echo("create"));
  auto missing = MakeRequest(Method::Get, "/nope");
  EXPECT_EQ(r.Dispatch(missing).status, 404);
  auto wrong = MakeRequest(Method::Get, "/api/repos/create");
  auto res = r.Dispatch(wrong);
  EXPECT_EQ(res.status, 405);
  EXPECT_NE(res.body.find("not allowed"), std::string::npos);
}

TEST(Router, AuthenticatorErrorStopsTheHandler) {
  Router r;
  bool ran = false;
  r.Add(Method::Get, "/x", ApiFamily::Hf, [&](Request&) -> Result<Response> {
    ran = true;
    return Response::Text(200, "");
  });
  r.SetAuthenticator([](const Request&) -> Result<Principal> {
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  });
  auto req = MakeRequest(Method::Get, "/x");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 401);
  EXPECT_FALSE(ran);
}

TEST(Router, TicketRoutesSkipTokenAuthentication) {
  Router r;
  r.Add(Method::Put, "/lfs-objects/upload/{ticket}/{oid}", ApiFamily::Lfs, Echo("up"),
        /*authenticate=*/false);
  r.SetAuthenticator([](const Request&) -> Result<Principal> {
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  });
  auto req = MakeRequest(Method::Get, "/lfs-objects/upload/t/o");
  req.method = Method::Put;
  req.method_name = "PUT";
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_TRUE(req.principal.anonymous);
}

TEST(Router, ThrownExceptionBecomesInternal) {
  Router r;
  r.Add(Method::Get, "/boom", ApiFamily::Hf,
        [](Request&) -> Result<Response> { throw std::runtime_error("boom"); });
  auto req = MakeRequest(Method::Get, "/boom");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(res.body.find("boom"), std::string::npos);  // internals are not leaked
}

TEST(Router, EmptySegmentsDoNotMatchParams) {
  Router r;
  r.Add(Method::Get, "/api/models/{ns}/{name}", ApiFamily::Hf, Echo("info"));
  auto req = MakeRequest(Method::Get, "/api/models//bert");
  EXPECT_EQ(r.Dispatch(req).status, 404);
}

}  // namespace
}  // namespace hangar::http

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


// A body source that fails the test if a handler-less path reads it.
class UnreadableBody final : public ByteSource {
 public:
  Result<size_t> Read(std::span<char>) override {
    ADD_FAILURE() << "Admit read the body";
    return size_t{0};
  }
};

TEST(Router, AdmitAnswersRefusalsWithoutTheHandlerOrTheBody) {
  Router r;
  bool ran = false;
  r.Add(Method::Post, "/x", ApiFamily::Hf, [&](Request&) -> Result<Response> {
    ran = true;
    return Response::Text(200, "");
  });
  r.SetAuthenticator([](const Request& req) -> Result<Principal> {
    if (req.Header("authorization").empty()) return Principal::Anonymous();
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  });
  auto bad = MakeRequest(Method::Post, "/x");
  bad.headers.emplace_back("authorization", "Bearer nope");
  bad.headers.emplace_back("origin", "https://a.example");
  bad.body = std::make_shared<UnreadableBody>();
  auto a = r.Admit(bad);
  EXPECT_EQ(a.route, nullptr);
  ASSERT_TRUE(a.answer.has_value());
  EXPECT_EQ(a.answer->status, 401);
  EXPECT_EQ(a.answer->GetHeader("X-Request-Id"), "t1");
  EXPECT_EQ(a.answer->GetHeader("Access-Control-Allow-Origin"), "*");
  auto missing = MakeRequest(Method::Post, "/nope");
  missing.body = std::make_shared<UnreadableBody>();
  auto m = r.Admit(missing);
  ASSERT_TRUE(m.answer.has_value());
  EXPECT_EQ(m.answer->status, 404);
  auto preflight = MakeRequest(Method::Options, "/x");
  preflight.method_name = "OPTIONS";
  auto p = r.Admit(preflight);
  ASSERT_TRUE(p.answer.has_value());
  EXPECT_EQ(p.answer->status, 204);
  EXPECT_FALSE(ran);
}

TEST(Router, AdmitThenRunRunsTheHandlerOnce) {
  Router r;
  int runs = 0;
  r.Add(Method::Post, "/api/{ns}/x", ApiFamily::Hf, [&](Request& req) -> Result<Response> {
    ++runs;
    return Response::Text(200, std::string(req.Param("ns")) + " " + req.principal.name);
  });
  r.SetAuthenticator([](const Request&) -> Result<Principal> {
    Principal p;
    p.anonymous = false;
    p.name = "alice";
    return p;
  });
  auto req = MakeRequest(Method::Post, "/api/acme/x");
  auto a = r.Admit(req);
  ASSERT_NE(a.route, nullptr);
  EXPECT_FALSE(a.answer.has_value());
  EXPECT_EQ(runs, 0);  // admission alone never runs the handler
  EXPECT_EQ(req.principal.name, "alice");
  auto res = r.Run(a, req);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "acme alice");
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
}

}  // namespace
}  // namespace hangar::http

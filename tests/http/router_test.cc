#include "http/router.h"

#include <gtest/gtest.h>

namespace hangar::http {
namespace {

Request MakeRequest(Method m, std::string path) {
  Request r;
  r.method = m;
  r.method_name = m == Method::Get    ? "GET"
                  : m == Method::Post ? "POST"
                  : m == Method::Put  ? "PUT"
                                      : "HEAD";
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

// A route's own check admitting a `ticket` (query or path parameter) equal to `good`; any
// other is refused 403 by the check itself.
OwnCheck TicketIs(std::string good) {
  return [good](Request& req) -> std::optional<Response> {
    std::string t = req.Query("ticket").value_or(std::string(req.Param("ticket")));
    if (t == good) return std::nullopt;
    return Response::Text(403, "bad ticket\n");
  };
}

// A body that must never be read: Admit works from the head alone.
class UntouchableBody final : public ByteSource {
 public:
  Result<size_t> Read(std::span<char>) override {
    ADD_FAILURE() << "the body was read";
    return MakeError(ErrorCode::Internal, "read");
  }
};

// "Bearer session" is alice's browser session, "Bearer ro" her read token, "Bearer rw" her
// write token, "Bearer bad" is refused; nothing sent is anonymous.
Result<Principal> FakeAuth(const Request& req, const Route&) {
  std::string_view h = req.Header("authorization");
  if (h.empty()) return Principal::Anonymous();
  if (h == "Bearer bad") {
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  }
  Principal p;
  p.anonymous = false;
  p.user_id = 1;
  p.name = "alice";
  p.token_name = "t";
  p.role = h == "Bearer ro" ? TokenRole::Read : TokenRole::Write;
  p.session = h == "Bearer session";
  return p;
}

// alice may write acme/pub (public) and read acme/priv (private); nobody else knows priv.
Result<void> FakeRepos(const Principal& who, RepoType, std::string_view ns, std::string_view name,
                       Access needed) {
  if (ns != "acme" || (name != "pub" && name != "priv")) {
    return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  }
  if (who.anonymous && name == "priv") {
    return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  }
  Access has = who.anonymous ? Access::Read : name == "pub" ? Access::Write : Access::Read;
  if (needed <= has) return {};
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "authentication required");
  return MakeError(ErrorCode::Forbidden, "no write access");
}

Router GatedRouter() {
  Router r;
  r.SetAuthenticator(FakeAuth);
  r.SetRepoAuthorizer(FakeRepos);
  r.Add(Method::Get, "/open", ApiFamily::Hf, Requirement::Public(), Echo("open"));
  r.Add(Method::Get, "/me", ApiFamily::Hf, Requirement::SignedIn(), Echo("me"));
  r.Add(Method::Post, "/settings", ApiFamily::Html, Requirement::Session(), Echo("settings"));
  r.Add(Method::Post, "/create", ApiFamily::Hf, Requirement::WriteRole(), Echo("create"));
  r.Add(Method::Get, "/r/{ns}/{name}", ApiFamily::Hf,
        Requirement::Repo(RepoType::Model, Access::Read), Echo("read"));
  r.Add(Method::Post, "/r/{ns}/{name}/commit", ApiFamily::Hf,
        Requirement::Repo(RepoType::Model, Access::Write), Echo("write"));
  r.Add(Method::Get, "/g/{ns}/{name}/info/refs", ApiFamily::Git,
        Requirement::RepoChallenge(RepoType::Model, Access::Read, true), Echo("git"));
  r.Add(Method::Post, "/g/{ns}/{name}/verify", ApiFamily::Lfs,
        Requirement::RepoOrTicket(RepoType::Model, Access::Write, TicketIs("good")),
        Echo("verify"));
  return r;
}

int Status(const Router& r, Method m, std::string path, std::string auth = "") {
  Request req = MakeRequest(m, std::move(path));
  size_t q = req.path.find('?');
  if (q != std::string::npos) {
    req.query = req.path.substr(q + 1);
    req.path.resize(q);
  }
  if (!auth.empty()) req.headers.emplace_back("authorization", "Bearer " + auth);
  req.body = std::make_shared<UntouchableBody>();
  Admission a = r.Admit(req);
  if (!a.answer) {
    EXPECT_NE(a.route, nullptr);
    return 0;  // admitted
  }
  EXPECT_EQ(a.route, nullptr);
  EXPECT_EQ(a.answer->GetHeader("X-Request-Id"), "t1");
  return a.answer->status;
}

TEST(Router, MatchesParamsAndRestOnRawPath) {
  Router r;
  r.Add(Method::Get, "/api/models/{ns}/{name}", ApiFamily::Hf, Requirement::Public(), Echo("info"));
  r.Add(Method::Get, "/{ns}/{name}/resolve/{rest*}", ApiFamily::Hf, Requirement::Public(),
        Echo("resolve"));
  auto req = MakeRequest(Method::Get, "/acme/bert/resolve/refs%2Fpr%2F1/dir/a%20b.txt");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "resolve ns=acme name=bert rest=refs%2Fpr%2F1/dir/a%20b.txt");
  auto info = MakeRequest(Method::Get, "/api/models/acme/bert");
  EXPECT_EQ(r.Dispatch(info).body, "info ns=acme name=bert");
  EXPECT_EQ(info.Param("ns"), "acme");
  EXPECT_EQ(r.Find(Method::Get, "/acme/bert/resolve/main/x"), &r.Routes()[1]);
  EXPECT_EQ(r.Find(Method::Post, "/acme/bert/resolve/main/x"), nullptr);
}

TEST(Router, HeadFallsBackToGetAndRequestIdIsSet) {
  Router r;
  r.Add(Method::Get, "/healthz", ApiFamily::Plain, Requirement::Public(), Echo("ok"));
  auto req = MakeRequest(Method::Head, "/healthz");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
}

TEST(Router, UnknownPathIs404AndWrongMethodIs405) {
  Router r;
  r.Add(Method::Post, "/api/repos/create", ApiFamily::Hf, Requirement::Public(), Echo("create"));
  auto missing = MakeRequest(Method::Get, "/nope");
  EXPECT_EQ(r.Dispatch(missing).status, 404);
  auto wrong = MakeRequest(Method::Get, "/api/repos/create");
  auto res = r.Dispatch(wrong);
  EXPECT_EQ(res.status, 405);
  EXPECT_NE(res.body.find("not allowed"), std::string::npos);
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
  EXPECT_EQ(res.GetHeader("Allow"), "POST, OPTIONS");  // RFC 9110 §15.5.6
  r.Add(Method::Get, "/api/repos/{x}", ApiFamily::Hf, Requirement::Public(), Echo("get"));
  auto put = MakeRequest(Method::Put, "/api/repos/create");
  EXPECT_EQ(r.Dispatch(put).GetHeader("Allow"), "POST, GET, HEAD, OPTIONS");
}

TEST(Router, AuthenticatorErrorStopsTheHandler) {
  Router r;
  bool ran = false;
  r.Add(Method::Get, "/x", ApiFamily::Hf, Requirement::Public(), [&](Request&) -> Result<Response> {
    ran = true;
    return Response::Text(200, "");
  });
  r.SetAuthenticator([](const Request&, const Route&) -> Result<Principal> {
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  });
  auto req = MakeRequest(Method::Get, "/x");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 401);
  EXPECT_FALSE(ran);
}

TEST(Router, TicketRoutesSkipTokenAuthentication) {
  Router r;
  r.Add(Method::Put, "/lfs-objects/upload/{ticket}/{oid}", ApiFamily::Lfs,
        Requirement::Ticket(TicketIs("t")), Echo("up"));
  r.SetAuthenticator([](const Request&, const Route&) -> Result<Principal> {
    return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
  });
  auto req = MakeRequest(Method::Put, "/lfs-objects/upload/t/o");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 200);
  EXPECT_TRUE(req.principal.anonymous);
  // The ticket is the route's own check, run before the handler (and the body).
  EXPECT_EQ(Status(r, Method::Put, "/lfs-objects/upload/forged/o"), 403);
}

TEST(Router, ThrownExceptionBecomesInternal) {
  Router r;
  r.Add(Method::Get, "/boom", ApiFamily::Hf, Requirement::Public(),
        [](Request&) -> Result<Response> { throw std::runtime_error("boom"); });
  auto req = MakeRequest(Method::Get, "/boom");
  auto res = r.Dispatch(req);
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(res.body.find("boom"), std::string::npos);  // internals are not leaked
}

TEST(Router, EmptySegmentsDoNotMatchParams) {
  Router r;
  r.Add(Method::Get, "/api/models/{ns}/{name}", ApiFamily::Hf, Requirement::Public(), Echo("info"));
  auto req = MakeRequest(Method::Get, "/api/models//bert");
  EXPECT_EQ(r.Dispatch(req).status, 404);
}

TEST(RouterGate, SignedInAndWriteRoleRoutes) {
  Router r = GatedRouter();
  EXPECT_EQ(Status(r, Method::Get, "/open"), 0);
  EXPECT_EQ(Status(r, Method::Get, "/open", "bad"), 401);  // a bad token is never ignored
  EXPECT_EQ(Status(r, Method::Get, "/me"), 401);
  EXPECT_EQ(Status(r, Method::Get, "/me", "ro"), 0);
  EXPECT_EQ(Status(r, Method::Post, "/create"), 401);
  EXPECT_EQ(Status(r, Method::Post, "/create", "ro"), 403);
  EXPECT_EQ(Status(r, Method::Post, "/create", "rw"), 0);
  EXPECT_EQ(Status(r, Method::Post, "/create", "session"), 0);
}

TEST(RouterGate, SessionRoutesRefuseEveryToken) {
  Router r = GatedRouter();
  EXPECT_EQ(Status(r, Method::Post, "/settings"), 401);
  EXPECT_EQ(Status(r, Method::Post, "/settings", "ro"), 403);
  EXPECT_EQ(Status(r, Method::Post, "/settings", "rw"), 403);
  EXPECT_EQ(Status(r, Method::Post, "/settings", "session"), 0);
}

TEST(RouterGate, RepoRoutesAskTheAuthorizer) {
  Router r = GatedRouter();
  EXPECT_EQ(Status(r, Method::Get, "/r/acme/pub"), 0);
  EXPECT_EQ(Status(r, Method::Get, "/r/acme/priv"), 404);  // never revealed
  EXPECT_EQ(Status(r, Method::Get, "/r/acme/priv", "ro"), 0);
  EXPECT_EQ(Status(r, Method::Post, "/r/acme/pub/commit"), 401);
  EXPECT_EQ(Status(r, Method::Post, "/r/acme/priv/commit", "rw"), 403);
  EXPECT_EQ(Status(r, Method::Post, "/r/acme/pub/commit", "rw"), 0);
  EXPECT_EQ(Status(r, Method::Get, "/r/acme/p%75b"), 0);  // decoded as the handlers do
}

TEST(RouterGate, GitRoutesChallengeAnonymousCallersAndStripDotGit) {
  Router r = GatedRouter();
  EXPECT_EQ(Status(r, Method::Get, "/g/acme/priv/info/refs"), 401);
  EXPECT_EQ(Status(r, Method::Get, "/g/acme/nothing/info/refs"), 401);  // the same answer
  EXPECT_EQ(Status(r, Method::Get, "/g/acme/priv.git/info/refs", "ro"), 0);
  EXPECT_EQ(Status(r, Method::Get, "/g/acme/nothing/info/refs", "ro"), 404);
}

TEST(RouterGate, TicketInQueryStandsInForTheRepoCheck) {
  Router r = GatedRouter();
  EXPECT_EQ(Status(r, Method::Post, "/g/acme/priv.git/verify"), 401);
  EXPECT_EQ(Status(r, Method::Post, "/g/acme/priv.git/verify?ticket=good"), 0);
  // The route's check decides, from the head: a wrong ticket is refused before the body.
  EXPECT_EQ(Status(r, Method::Post, "/g/acme/priv.git/verify?ticket=x"), 403);
}

TEST(RouterGate, RepoRoutesFailClosedWithoutAnAuthorizer) {
  Router r;
  r.SetAuthenticator(FakeAuth);
  r.Add(Method::Get, "/r/{ns}/{name}", ApiFamily::Hf,
        Requirement::Repo(RepoType::Model, Access::Read), Echo("read"));
  EXPECT_EQ(Status(r, Method::Get, "/r/acme/pub"), 500);
}

TEST(RouterGate, RunAfterAdmitRunsTheHandlerWithThePrincipal) {
  Router r = GatedRouter();
  Request req = MakeRequest(Method::Get, "/me");
  req.headers.emplace_back("authorization", "Bearer ro");
  req.headers.emplace_back("origin", "https://example.org");
  Admission a = r.Admit(req);
  ASSERT_FALSE(a.answer);
  EXPECT_EQ(req.principal.name, "alice");
  Response res = r.Run(a, req);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
  EXPECT_EQ(res.GetHeader("Access-Control-Allow-Origin"), "*");
}

TEST(RouterGate, EarlyAnswersCarryCorsHeaders) {
  Router r = GatedRouter();
  Request req = MakeRequest(Method::Post, "/create");
  req.headers.emplace_back("origin", "https://example.org");
  Response res = r.Dispatch(req);
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.GetHeader("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(res.GetHeader("X-Request-Id"), "t1");
  Request pre = MakeRequest(Method::Options, "/create");
  pre.method_name = "OPTIONS";
  pre.headers.emplace_back("origin", "https://example.org");
  Response p = r.Dispatch(pre);
  EXPECT_EQ(p.status, 204);
  EXPECT_EQ(p.GetHeader("Access-Control-Allow-Origin"), "*");
}

TEST(RouterGate, RepoRequirementWithoutRepoParamsAborts) {
  EXPECT_DEATH(
      {
        Router r;
        r.Add(Method::Get, "/x/{name}", ApiFamily::Hf,
              Requirement::Repo(RepoType::Model, Access::Read), Echo("x"));
      },
      "");
}

}  // namespace
}  // namespace hangar::http

#include "api/oci/oci_auth.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>

#include "core/util.h"
#include "services/oci/oci_token.h"

namespace hangar::api {
namespace {

constexpr std::string_view kSecret = "server-secret-0123456789abcdef012";

// A stand-in for the hub authenticator: "Bearer hf_good" and any Basic header are bob
// (write token); "Bearer hf_ro" is bob with a read token; anything else sent is refused.
struct FakeHub {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  HubAuthenticator Fn() const {
    auto c = calls;
    return [c](const http::Request& req) -> Result<Principal> {
      ++*c;
      std::string_view h = req.Header("authorization");
      if (h.empty()) return Principal::Anonymous();
      Principal p;
      p.anonymous = false;
      p.user_id = 3;
      p.name = "bob";
      p.role = TokenRole::Write;
      if (h == "Bearer hf_good" || h.starts_with("Basic ")) return p;
      p.role = TokenRole::Read;
      if (h == "Bearer hf_ro") return p;
      return MakeError(ErrorCode::Unauthorized, "Invalid credentials in Authorization header");
    };
  }
};

http::Request Req(std::string_view authorization = "") {
  http::Request r;
  r.base_url = "http://127.0.0.1:5000";
  r.headers.emplace_back("host", "127.0.0.1:5000");
  if (!authorization.empty()) r.headers.emplace_back("authorization", authorization);
  return r;
}

OciAuthOptions Options(bool bearer = true, std::string service = "") {
  OciAuthOptions o;
  o.secret = std::string(kSecret);
  o.bearer_challenge = bearer;
  o.service = std::move(service);
  o.token_ttl = std::chrono::seconds(300);
  return o;
}

// A registry token for alice (user 7, admin, write role) with `access`, valid now.
std::string Token(std::vector<services::OciResourceAccess> access,
                  std::string audience = "127.0.0.1:5000", int64_t issued = NowUnix(),
                  int64_t ttl = 300) {
  services::RegistryTokenClaims c;
  Principal alice;
  alice.anonymous = false;
  alice.user_id = 7;
  alice.name = "alice";
  alice.is_admin = true;
  alice.role = TokenRole::Write;
  c.SetSubject(alice);
  c.access = std::move(access);
  c.audience = std::move(audience);
  c.issued_at = issued;
  c.expires_at = issued + ttl;
  return services::IssueRegistryToken(kSecret, c).value();
}

TEST(OciAuthCaller, NoHeaderIsAnonymousAndHubTokensGoToTheHub) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  auto anon = auth.Caller(Req(), "ns/img", OciAction::Pull);
  ASSERT_TRUE(anon.has_value());
  EXPECT_TRUE(anon->anonymous);

  auto basic = auth.Caller(Req("Basic eDpoZl9nb29k"), "ns/img", OciAction::Push);
  ASSERT_TRUE(basic.has_value());
  EXPECT_EQ(basic->name, "bob");
  auto bearer = auth.Caller(Req("Bearer hf_good"), "ns/img", OciAction::Push);
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->name, "bob");
  EXPECT_EQ(*hub.calls, 3);

  auto bad = auth.Caller(Req("Bearer hf_wrong"), "ns/img", OciAction::Pull);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::Unauthorized);
}

TEST(OciAuthCaller, BasicWithAnEmptyPasswordIsAnonymous) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  // base64(":") as skopeo sends it without credentials, and base64("user:").
  for (std::string_view h : {"Basic Og==", "basic  dXNlcjo= "}) {
    auto p = auth.Caller(Req(h), "ns/img", OciAction::Pull);
    ASSERT_TRUE(p.has_value()) << h;
    EXPECT_TRUE(p->anonymous) << h;
    EXPECT_TRUE(auth.HubCaller(Req(h))->anonymous) << h;
  }
  EXPECT_EQ(*hub.calls, 0);
  auto with_password = auth.Caller(Req("Basic dTpw"), "ns/img", OciAction::Pull);  // "u:p"
  ASSERT_TRUE(with_password.has_value());
  EXPECT_EQ(with_password->name, "bob");
  EXPECT_EQ(*hub.calls, 1);
}

TEST(OciAuthCaller, RegistryTokenIsRebuiltIntoItsPrincipalWithoutTheHub) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  std::string t = Token({{"repository", "ns/img", {"pull", "push"}}});
  for (OciAction a : {OciAction::Pull, OciAction::Push}) {
    auto p = auth.Caller(Req("Bearer " + t), "ns/img", a);
    ASSERT_TRUE(p.has_value()) << p.error().message;
    EXPECT_FALSE(p->anonymous);
    EXPECT_EQ(p->user_id, 7);
    EXPECT_EQ(p->name, "alice");
    EXPECT_TRUE(p->is_admin);
    EXPECT_EQ(p->role, TokenRole::Write);
  }
  // The scheme is case-insensitive (RFC 6750 §2.1); /v2/ takes any valid token.
  EXPECT_TRUE(auth.Caller(Req("bearer " + t), "", OciAction::Pull).has_value());
  EXPECT_EQ(*hub.calls, 0);
}

TEST(OciAuthCaller, TokenNotCoveringTheRequestIsUnauthorized) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  std::string t = Token({{"repository", "ns/a", {"pull"}}});
  auto push = auth.Caller(Req("Bearer " + t), "ns/a", OciAction::Push);
  ASSERT_FALSE(push.has_value());
  EXPECT_EQ(push.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(push.error().message.find("repository:ns/a:pull,push"), std::string::npos)
      << push.error().message;
  auto other = auth.Caller(Req("Bearer " + t), "ns/b", OciAction::Pull);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::Unauthorized);
  auto del = auth.Caller(Req("Bearer " + t), "ns/a", OciAction::Delete);
  ASSERT_FALSE(del.has_value());
  EXPECT_EQ(*hub.calls, 0);  // a registry token is never retried as a hub token
}

TEST(OciAuthCaller, ExpiredTamperedOrOtherServiceTokensAreUnauthorized) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  const std::vector<services::OciResourceAccess> access{{"repository", "ns/a", {"pull"}}};

  auto expired = auth.Caller(Req("Bearer " + Token(access, "127.0.0.1:5000", NowUnix() - 400)),
                             "ns/a", OciAction::Pull);
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(expired.error().message.find("expired"), std::string::npos);

  auto other_service =
      auth.Caller(Req("Bearer " + Token(access, "registry.example")), "ns/a", OciAction::Pull);
  ASSERT_FALSE(other_service.has_value());
  EXPECT_EQ(other_service.error().code, ErrorCode::Unauthorized);

  std::string t = Token(access);
  t[10] = t[10] == 'A' ? 'B' : 'A';
  auto tampered = auth.Caller(Req("Bearer " + t), "ns/a", OciAction::Pull);
  ASSERT_FALSE(tampered.has_value());
  EXPECT_EQ(tampered.error().code, ErrorCode::Unauthorized);

  OciAuth other_key(hub.Fn(), [] {
    auto o = Options();
    o.secret = "another secret";
    return o;
  }());
  EXPECT_FALSE(other_key.Caller(Req("Bearer " + Token(access)), "ns/a", OciAction::Pull));
}

TEST(OciAuthCaller, ConfiguredServiceIsTheAudienceWhateverTheHost) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options(true, "hub.example"));
  EXPECT_EQ(auth.Service(Req()), "hub.example");
  const std::vector<services::OciResourceAccess> access{{"repository", "ns/a", {"pull"}}};
  EXPECT_TRUE(auth.Caller(Req("Bearer " + Token(access, "hub.example")), "ns/a", OciAction::Pull));
  EXPECT_FALSE(auth.Caller(Req("Bearer " + Token(access)), "ns/a", OciAction::Pull));
  OciAuth by_host(hub.Fn(), Options());
  EXPECT_EQ(by_host.Service(Req()), "127.0.0.1:5000");
}

TEST(OciAuthUnauthorized, BearerChallengeNamesRealmServiceAndScope) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  auto res = auth.Unauthorized(Req(), "ns/img", OciAction::Push, "authentication required");
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.GetHeader("WWW-Authenticate"),
            "Bearer realm=\"http://127.0.0.1:5000/v2/token\",service=\"127.0.0.1:5000\","
            "scope=\"repository:ns/img:pull,push\"");
  auto body = boost::json::parse(res.body);
  EXPECT_EQ(body.at("errors").at(0).at("code").as_string(), "UNAUTHORIZED");
  EXPECT_EQ(body.at("errors").at(0).at("message").as_string(), "authentication required");

  EXPECT_EQ(auth.Unauthorized(Req(), "ns/img", OciAction::Pull, "x").GetHeader("WWW-Authenticate"),
            "Bearer realm=\"http://127.0.0.1:5000/v2/token\",service=\"127.0.0.1:5000\","
            "scope=\"repository:ns/img:pull\"");
  EXPECT_EQ(auth.Unauthorized(Req(), "", OciAction::Pull, "x").GetHeader("WWW-Authenticate"),
            "Bearer realm=\"http://127.0.0.1:5000/v2/token\",service=\"127.0.0.1:5000\"");
  EXPECT_EQ(OciAuth::ChallengeScope("ns/img", OciAction::Delete), "repository:ns/img:delete");
}

TEST(OciAuthUnauthorized, QuotesInTheHostCannotBreakTheChallenge) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options());
  http::Request r = Req();
  r.headers[0].second = "evil\",scope=\"x";
  auto res = auth.Unauthorized(r, "", OciAction::Pull, "x");
  EXPECT_EQ(res.GetHeader("WWW-Authenticate"),
            "Bearer realm=\"http://127.0.0.1:5000/v2/token\",service=\"evil\\\",scope=\\\"x\"");
}

TEST(OciAuthUnauthorized, BasicModeChallengesWithBasic) {
  FakeHub hub;
  OciAuth auth(hub.Fn(), Options(false));
  auto res = auth.Unauthorized(Req(), "ns/img", OciAction::Push, "authentication required");
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.GetHeader("WWW-Authenticate"), "Basic realm=\"Hangar\"");
  EXPECT_NE(res.body.find("UNAUTHORIZED"), std::string::npos);
}

TEST(OciAuthOptions, TokenLifetimeIsNeverBelowSixtySeconds) {
  FakeHub hub;
  auto o = Options();
  o.token_ttl = std::chrono::seconds(1);
  OciAuth auth(hub.Fn(), o);
  EXPECT_EQ(auth.options().token_ttl, std::chrono::seconds(60));
}

}  // namespace
}  // namespace hangar::api

#include "services/oci/oci_token.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hangar::services {
namespace {

constexpr std::string_view kKey = "0123456789abcdef0123456789abcdef";

// --- scope grammar (oci.md §9.2) ---

TEST(OciScope, SplitsTypeAtFirstColonAndActionsAtLast) {
  auto s = ParseOciScope("repository:registry.example:5000/ns/img:pull,push");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->type, "repository");
  EXPECT_EQ(s->name, "registry.example:5000/ns/img");
  EXPECT_EQ(s->actions, (std::vector<std::string>{"pull", "push"}));

  auto c = ParseOciScope("registry:catalog:*");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->type, "registry");
  EXPECT_EQ(c->name, "catalog");
  EXPECT_EQ(c->actions, (std::vector<std::string>{"*"}));
}

TEST(OciScope, ClassSuffixIsIgnoredAndEmptyOrRepeatedActionsMerge) {
  auto s = ParseOciScope("repository(plugin):ns/img:pull,,pull,");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->type, "repository");
  EXPECT_EQ(s->actions, (std::vector<std::string>{"pull"}));

  auto none = ParseOciScope("repository:ns/img:");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->actions.empty());
}

TEST(OciScope, MalformedScopesAreBadRequestsNamingTheScope) {
  for (std::string_view bad :
       {"", "repository", "repository:ns/img", "Repository:ns/img:pull", "repo-x:ns/img:pull",
        "repository::pull", ":ns/img:pull", "repository:ns/img:PULL", "repository:ns/img:pu-ll",
        "repository(:ns/img:pull", "repository(Plugin):ns/img:pull", "repository():a:pull"}) {
    auto s = ParseOciScope(bad);
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::BadRequest) << bad;
    EXPECT_NE(s.error().message.find("invalid scope '" + std::string(bad) + "'"), std::string::npos)
        << s.error().message;
  }
}

TEST(OciScopes, SpaceSeparatedAndRepeatedParamsMergePerResource) {
  auto s = ParseOciScopes({"repository:a/x:pull repository:b/y:push", "repository:a/x:push,pull",
                           "  registry:catalog:*  "});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0], (OciResourceAccess{"repository", "a/x", {"pull", "push"}}));
  EXPECT_EQ((*s)[1], (OciResourceAccess{"repository", "b/y", {"push"}}));
  EXPECT_EQ((*s)[2], (OciResourceAccess{"registry", "catalog", {"*"}}));
  EXPECT_EQ(FormatOciScope((*s)[0]), "repository:a/x:pull,push");

  auto bad = ParseOciScopes({"repository:a/x:pull", "nonsense"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::BadRequest);

  std::string many;
  for (int i = 0; i < 65; ++i) many += "repository:n/r" + std::to_string(i) + ":pull ";
  auto too_many = ParseOciScopes({many});
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().code, ErrorCode::BadRequest);
  EXPECT_NE(too_many.error().message.find("too many scopes"), std::string::npos);
}

TEST(OciAccess, CoversExactResourceAndActionOrStar) {
  std::vector<OciResourceAccess> a{{"repository", "ns/a", {"pull"}}, {"repository", "ns/b", {"*"}}};
  EXPECT_TRUE(OciAccessCovers(a, "repository", "ns/a", "pull"));
  EXPECT_FALSE(OciAccessCovers(a, "repository", "ns/a", "push"));
  EXPECT_TRUE(OciAccessCovers(a, "repository", "ns/b", "delete"));
  EXPECT_FALSE(OciAccessCovers(a, "repository", "ns/c", "pull"));
  EXPECT_FALSE(OciAccessCovers(a, "repository", "ns/a/x", "pull"));
  EXPECT_FALSE(OciAccessCovers(a, "registry", "ns/a", "pull"));
}

Principal User(TokenRole role, bool admin = false) {
  Principal p;
  p.anonymous = false;
  p.user_id = 7;
  p.name = "alice";
  p.is_admin = admin;
  p.role = role;
  return p;
}

TEST(OciGrant, IntersectsRequestedWithAllowed) {
  const std::vector<std::string> pp{"pull", "push"};
  EXPECT_EQ(GrantRepositoryActions(pp, Access::Write, User(TokenRole::Write)), pp);
  EXPECT_EQ(GrantRepositoryActions(pp, Access::Admin, User(TokenRole::Write)), pp);
  EXPECT_EQ(GrantRepositoryActions(pp, Access::Read, User(TokenRole::Write)),
            (std::vector<std::string>{"pull"}));
  EXPECT_TRUE(GrantRepositoryActions(pp, Access::None, User(TokenRole::Write)).empty());
  EXPECT_EQ(GrantRepositoryActions({"*"}, Access::Write, User(TokenRole::Write)),
            (std::vector<std::string>{"pull", "push", "delete"}));
  EXPECT_EQ(GrantRepositoryActions({"delete", "bogus"}, Access::Write, User(TokenRole::Write)),
            (std::vector<std::string>{"delete"}));
}

TEST(OciGrant, ReadTokensAndAnonymousNeverPushWhateverTheAccess) {
  const std::vector<std::string> all{"pull", "push", "delete"};
  EXPECT_EQ(GrantRepositoryActions(all, Access::Admin, User(TokenRole::Read, true)),
            (std::vector<std::string>{"pull"}));
  EXPECT_EQ(GrantRepositoryActions(all, Access::Write, Principal::Anonymous()),
            (std::vector<std::string>{"pull"}));
  EXPECT_EQ(GrantRepositoryActions({"*"}, Access::Write, Principal::Anonymous()),
            (std::vector<std::string>{"pull"}));
}

// --- signed tokens ---

RegistryTokenClaims Claims() {
  RegistryTokenClaims c;
  c.SetSubject(User(TokenRole::Write, true));
  c.access = {{"repository", "ns/img", {"pull", "push"}}, {"registry", "catalog", {"*"}}};
  c.audience = "127.0.0.1:5000";
  c.issued_at = 1'000'000;
  c.expires_at = 1'000'300;
  return c;
}

TEST(RegistryToken, RoundTripsWithPrefixAndToken68Characters) {
  auto t = IssueRegistryToken(kKey, Claims());
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_TRUE(IsRegistryToken(*t));
  EXPECT_FALSE(IsRegistryToken("hf_abcdefghijklmnopqrstuvwxyz01234567"));
  for (char c : *t) {
    EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') << *t;
  }
  auto v = VerifyRegistryToken(kKey, *t, "127.0.0.1:5000", 1'000'299);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(*v, Claims());

  Principal p = v->ToPrincipal();
  EXPECT_FALSE(p.anonymous);
  EXPECT_EQ(p.user_id, 7);
  EXPECT_EQ(p.name, "alice");
  EXPECT_TRUE(p.is_admin);
  EXPECT_EQ(p.role, TokenRole::Write);
  EXPECT_TRUE(p.CanWrite());
}

TEST(RegistryToken, AnonymousSubjectStaysAnonymous) {
  RegistryTokenClaims c = Claims();
  c.SetSubject(Principal::Anonymous());
  auto v = VerifyRegistryToken(kKey, IssueRegistryToken(kKey, c).value(), c.audience, 1'000'000);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->anonymous);
  EXPECT_TRUE(v->ToPrincipal().anonymous);
  EXPECT_FALSE(v->ToPrincipal().CanWrite());
}

TEST(RegistryToken, EveryTamperedCharacterIsRejected) {
  std::string t = IssueRegistryToken(kKey, Claims()).value();
  for (size_t i = 0; i < t.size(); ++i) {
    std::string bad = t;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    auto v = VerifyRegistryToken(kKey, bad, "127.0.0.1:5000", 1'000'000);
    ASSERT_FALSE(v.has_value()) << "position " << i;
    EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  }
  // Truncated, extended, or with the MAC cut off.
  for (std::string bad :
       {t.substr(0, t.size() - 1), t + "A", t.substr(0, t.rfind('.')),
        t.substr(0, t.rfind('.') + 1), std::string("hgroci1."), std::string("hgroci1..")}) {
    auto v = VerifyRegistryToken(kKey, bad, "127.0.0.1:5000", 1'000'000);
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  }
}

TEST(RegistryToken, ForgedClaimsUnderAnotherKeyAreRejected) {
  RegistryTokenClaims forged = Claims();
  forged.access = {{"repository", "victim/img", {"*"}}};
  std::string t = IssueRegistryToken("attacker key", forged).value();
  auto v = VerifyRegistryToken(kKey, t, "127.0.0.1:5000", 1'000'000);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(v.error().message, "invalid registry token");
}

TEST(RegistryToken, ExpiresAtItsSecond) {
  std::string t = IssueRegistryToken(kKey, Claims()).value();
  EXPECT_TRUE(VerifyRegistryToken(kKey, t, "127.0.0.1:5000", 1'000'299).has_value());
  auto v = VerifyRegistryToken(kKey, t, "127.0.0.1:5000", 1'000'300);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(v.error().message.find("expired"), std::string::npos);
}

TEST(RegistryToken, WrongAudienceIsRejected) {
  std::string t = IssueRegistryToken(kKey, Claims()).value();
  auto v = VerifyRegistryToken(kKey, t, "other.example", 1'000'000);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(v.error().message.find("other.example"), std::string::npos);
}

TEST(RegistryToken, EmptyKeyNeitherSignsNorVerifies) {
  auto t = IssueRegistryToken("", Claims());
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, ErrorCode::Internal);
  std::string good = IssueRegistryToken(kKey, Claims()).value();
  EXPECT_FALSE(VerifyRegistryToken("", good, "127.0.0.1:5000", 1'000'000).has_value());
}

TEST(RegistryToken, HubTokensAndGarbageAreNotRegistryTokens) {
  for (std::string_view bad : {"", "hf_abc", "hgroci1", "hgroci2.e30.xx", "Bearer hgroci1.x.y"}) {
    auto v = VerifyRegistryToken(kKey, bad, "127.0.0.1:5000", 0);
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  }
  EXPECT_FALSE(VerifyRegistryToken(kKey, std::string(70'000, 'a'), "x", 0).has_value());
}

// --- the token service's grants ---

// Access table: "alice/img" is alice's (Admin); "pub/img" is public (Read); "org/img" is an
// org repository alice may write; "sec/img" is private to others (RepoNotFound).
Result<Access> FakeAccess(const Principal& who, std::string_view name) {
  if (name == "pub/img") return Access::Read;
  if (name == "sec/img") return MakeError(ErrorCode::RepoNotFound, "no such repository");
  if (name == "Bad//name") return MakeError(ErrorCode::NameInvalid, "bad name");
  if (name == "boom/img") return MakeError(ErrorCode::Internal, "database down");
  if (who.anonymous) return Access::None;
  if (name == "alice/img") return who.name == "alice" ? Access::Admin : Access::None;
  if (name == "org/img") return Access::Write;
  return Access::None;
}

OciTokenService Service(int64_t ttl = 300) {
  return OciTokenService(OciTokenOptions{std::string(kKey), ttl}, FakeAccess);
}

std::map<std::string, std::vector<std::string>> Granted(const IssuedRegistryToken& t) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& a : t.claims.access) out[a.type + ":" + a.name] = a.actions;
  return out;
}

TEST(OciTokenService, GrantsTheIntersectionPerRepositoryAndSignsIt) {
  auto scopes =
      ParseOciScopes(
          {"repository:alice/img:pull,push", "repository:pub/img:pull,push repository:sec/img:pull",
           "repository:org/img:* registry:catalog:* repository:Bad//name:pull", "thing:x:pull"})
          .value();
  auto t = Service().Issue(User(TokenRole::Write), "hangar.test", scopes, 5000);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  auto g = Granted(*t);
  EXPECT_EQ(g.size(), 4u);  // sec/img, Bad//name and thing:x granted nothing: left out
  EXPECT_EQ(g["repository:alice/img"], (std::vector<std::string>{"pull", "push"}));
  EXPECT_EQ(g["repository:pub/img"], (std::vector<std::string>{"pull"}));
  EXPECT_EQ(g["repository:org/img"], (std::vector<std::string>{"pull", "push", "delete"}));
  EXPECT_EQ(g["registry:catalog"], (std::vector<std::string>{"*"}));
  EXPECT_EQ(t->expires_in, 300);

  auto v = VerifyRegistryToken(kKey, t->token, "hangar.test", 5299);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(*v, t->claims);
  EXPECT_EQ(v->issued_at, 5000);
  EXPECT_EQ(v->expires_at, 5300);
  EXPECT_EQ(v->user, "alice");
  EXPECT_FALSE(VerifyRegistryToken(kKey, t->token, "hangar.test", 5300).has_value());
}

TEST(OciTokenService, AnonymousGetsPullOnPublicOnly) {
  auto scopes =
      ParseOciScopes({"repository:pub/img:pull,push,delete repository:alice/img:pull"}).value();
  auto t = Service().Issue(Principal::Anonymous(), "hangar.test", scopes, 0);
  ASSERT_TRUE(t.has_value());
  auto g = Granted(*t);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(g["repository:pub/img"], (std::vector<std::string>{"pull"}));
  EXPECT_TRUE(t->claims.anonymous);
}

TEST(OciTokenService, ReadOnlyHubTokenNeverGetsPush) {
  auto scopes = ParseOciScopes({"repository:alice/img:pull,push,delete"}).value();
  auto t = Service().Issue(User(TokenRole::Read), "hangar.test", scopes, 0);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(Granted(*t)["repository:alice/img"], (std::vector<std::string>{"pull"}));
  EXPECT_EQ(t->claims.role, TokenRole::Read);
}

TEST(OciTokenService, EmptyRequestGivesAnEmptyButValidToken) {
  auto t = Service().Issue(User(TokenRole::Write), "hangar.test", {}, 0);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->claims.access.empty());
  EXPECT_TRUE(VerifyRegistryToken(kKey, t->token, "hangar.test", 1).has_value());
}

TEST(OciTokenService, StoreFailuresFailTheRequest) {
  auto scopes = ParseOciScopes({"repository:boom/img:pull"}).value();
  auto t = Service().Issue(User(TokenRole::Write), "hangar.test", scopes, 0);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code, ErrorCode::Internal);
}

TEST(OciTokenService, LifetimeIsNeverBelowSixtySeconds) {
  auto t = Service(5).Issue(User(TokenRole::Write), "hangar.test", {}, 100);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->expires_in, 60);
  EXPECT_EQ(t->claims.expires_at, 160);
}

}  // namespace
}  // namespace hangar::services

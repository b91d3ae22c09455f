// The authorization matrix (issue 13, acceptance "Authorization matrix"): every route the
// real App registers × eight principals × a public and a private repo, admitted or not by
// the router's gate with the real authenticator, sessions and access rules. The expected
// cells are in authz_matrix.tsv beside this file; a route missing from it, a row naming
// no route and a cell that differs each fail. To regenerate the table after a deliberate
// change, run with HANGAR_AUTHZ_MATRIX_OUT=path and review the diff.
//
// Also the regression tests of the holes the attack run found: a read token created a
// write token, revoked the user's other tokens and created orgs through the web forms.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "cli/app.h"
#include "core/util.h"
#include "git/test_repo.h"

namespace hangar::cli {
namespace {

using http::Method;
using http::MethodName;

constexpr const char* kPrincipals[] = {"anonymous", "session", "read",     "write",
                                       "admin",     "other",   "org-read", "org-write"};
constexpr const char* kPassword = "alice-Passw0rd-long";
// A double-submit CSRF cookie value (32 alphanumerics) for forms without a session.
constexpr const char* kCsrfCookie = "abcdefghijklmnopqrstuvwxyz012345";

// A concrete path for `pattern` naming repo `name` of namespace acme.
std::string PathFor(const std::string& pattern, const std::string& name) {
  static const std::map<std::string, std::string> kValues = {
      {"{ns}", "acme"},
      {"{org}", "acme"},
      {"{rev}", "main"},
      {"{sha}", std::string(40, 'a')},
      {"{id}", "1"},
      {"{n}", "1"},
      {"{part}", "1"},
      {"{ticket}", "not-a-ticket"},
      {"{oid}", std::string(64, 'b')},
      {"{rest*}", "main/README.md"},
      {"{path*}", "README.md"},
      {"{file*}", "main.zip"},
      {"{tag*}", "v1"},
  };
  std::string out;
  size_t start = 1;
  while (start <= pattern.size()) {
    size_t end = pattern.find('/', start);
    if (end == std::string::npos) end = pattern.size();
    std::string seg = pattern.substr(start, end - start);
    out += "/";
    if (seg == "{name}") {
      out += name;
    } else if (pattern == "/v2/{rest*}" && seg == "{rest*}") {
      out += "acme/" + name + "/manifests/latest";
    } else if (auto it = kValues.find(seg); it != kValues.end()) {
      out += it->second;
    } else {
      out += seg;
    }
    start = end + 1;
  }
  return out;
}

// A hub on a temporary data dir: users, tokens, a session, an org and its repos.
class AuthzHub {
 public:
  AuthzHub() {
    auto app = App::OpenFor("", dir_.path());
    if (!app) ADD_FAILURE() << app.error().message;
    app_ = std::move(*app);
    // As `hangar serve` does, so the viewer's routes and pages are in the matrix too.
    if (auto opened = app_->OpenViewer(); !opened) ADD_FAILURE() << opened.error().message;
    router_ = &app_->Router();
    auto& accounts = app_->accounts();
    for (const char* user : {"alice", "root", "bob", "carol", "dave"}) {
      auto made = accounts.CreateUser(user, std::string(user) + "@example.com",
                                      std::string_view(user) == "root", kPassword);
      EXPECT_TRUE(made.has_value()) << made.error().message;
    }
    EXPECT_TRUE(accounts.CreateOrg("acme", "alice").has_value());
    EXPECT_TRUE(accounts.AddMember("acme", "carol", db::OrgRole::Read).has_value());
    EXPECT_TRUE(accounts.AddMember("acme", "dave", db::OrgRole::Write).has_value());
    credentials_["read"] = Token("alice", TokenRole::Read);
    credentials_["write"] = Token("alice", TokenRole::Write);
    credentials_["admin"] = Token("root", TokenRole::Write);
    credentials_["other"] = Token("bob", TokenRole::Write);
    credentials_["org-read"] = Token("carol", TokenRole::Write);
    credentials_["org-write"] = Token("dave", TokenRole::Write);
    session_ = Login("alice");
    auto owner = app_->authenticator().Authenticate("Bearer " + credentials_["write"]);
    EXPECT_TRUE(owner.has_value());
    for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
      for (bool is_private : {false, true}) {
        auto id = RepoId::Parse(t, "acme", is_private ? "priv" : "pub");
        auto made = app_->repos().Create(*owner, *id, is_private);
        EXPECT_TRUE(made.has_value()) << made.error().message;
      }
    }
  }

  const http::Router& router() const { return *router_; }
  App& app() { return *app_; }
  const std::string& session() const { return session_; }
  const std::string& credential(const std::string& who) { return credentials_[who]; }

  // A request as `who` would send it: a bearer token, or the session cookie.
  http::Request Make(Method m, std::string path, const std::string& who, std::string body = "") {
    http::Request req;
    req.method = m;
    req.method_name = std::string(MethodName(m));
    size_t q = path.find('?');
    req.target = path;
    req.path = path.substr(0, q);
    if (q != std::string::npos) req.query = path.substr(q + 1);
    req.request_id = "authz";
    req.remote = "127.0.0.1:4000";
    req.base_url = "http://127.0.0.1:8080";
    req.headers.emplace_back("host", "127.0.0.1:8080");
    if (who == "session") {
      req.headers.emplace_back("cookie", "hangar_session=" + session_);
    } else if (who != "anonymous") {
      req.headers.emplace_back("authorization", "Bearer " + credentials_.at(who));
    }
    req.body = std::make_shared<StringSource>(std::move(body));
    return req;
  }

  // A form POST by `who`: as a browser sends it, with the session's CSRF token, or for a
  // token caller the double-submit cookie and its matching field (the attack's request).
  http::Response PostForm(const std::string& path, const std::string& who,
                          const std::string& fields) {
    std::string csrf = who == "session" ? SessionCsrf() : kCsrfCookie;
    http::Request req = Make(Method::Post, path, who, "_csrf=" + csrf + "&" + fields);
    req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
    if (who != "session")
      req.headers.emplace_back("cookie", std::string("hangar_csrf=") + kCsrfCookie);
    return router_->Dispatch(req);
  }

  // The CSRF token of alice's session, from her tokens page.
  std::string SessionCsrf() {
    http::Request req = Make(Method::Get, "/settings/tokens", "session");
    http::Response res = router_->Dispatch(req);
    EXPECT_EQ(res.status, 200);
    const std::string marker = "name=\"_csrf\" value=\"";
    size_t at = res.body.find(marker);
    if (at == std::string::npos) return {};
    at += marker.size();
    return res.body.substr(at, res.body.find('"', at) - at);
  }

 private:
  std::string Token(const std::string& user, TokenRole role) {
    auto t = app_->authenticator().CreateToken(user, user + (role == TokenRole::Read ? "-r" : "-w"),
                                               role);
    EXPECT_TRUE(t.has_value()) << t.error().message;
    return t.has_value() ? t->token : std::string();
  }

  // Signs in through the real /login form; returns the session cookie's value.
  std::string Login(const std::string& user) {
    http::Request req = Make(Method::Post, "/login", "anonymous",
                             std::string("_csrf=") + kCsrfCookie + "&username=" + user +
                                 "&password=" + kPassword + "&next=/");
    req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
    req.headers.emplace_back("cookie", std::string("hangar_csrf=") + kCsrfCookie);
    http::Response res = router_->Dispatch(req);
    EXPECT_EQ(res.status, 303) << res.body;
    for (const auto& [k, v] : res.headers) {
      if (k == "Set-Cookie" && v.starts_with("hangar_session=")) {
        return v.substr(15, v.find(';') - 15);
      }
    }
    ADD_FAILURE() << "no session cookie";
    return {};
  }

  git::testing::TempDir dir_;
  std::unique_ptr<App> app_;
  http::Router* router_ = nullptr;
  std::map<std::string, std::string> credentials_;
  std::string session_;
};

// "ok" when the gate admits the request, else the status of its early answer.
std::string Cell(AuthzHub& hub, const http::Route& route, const std::string& who,
                 const std::string& repo) {
  http::Request req = hub.Make(route.method, PathFor(route.pattern, repo), who);
  http::Admission a = hub.router().Admit(req);
  if (!a.answer) return a.route == &route ? "ok" : "ok:other-route";
  return std::to_string(a.answer->status);
}

struct Row {
  std::string need;
  std::vector<std::string> cells;  // per principal: "<public>/<private>"
};

std::map<std::string, Row> ReadTable(const std::string& path) {
  std::map<std::string, Row> rows;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) f.push_back(x);
    if (f.size() != 3 + std::size(kPrincipals)) {
      ADD_FAILURE() << "malformed row (want method, pattern, need and 8 cells): " << line;
      continue;
    }
    std::string key = f[0] + " " + f[1];
    EXPECT_FALSE(rows.contains(key)) << "row listed twice: " << key;
    rows[key] = Row{f[2], std::vector<std::string>(f.begin() + 3, f.end())};
  }
  return rows;
}

TEST(AuthzMatrix, EveryRouteEveryPrincipalBothRepos) {
  AuthzHub hub;
  std::map<std::string, Row> want = ReadTable(HANGAR_AUTHZ_MATRIX);
  std::ostringstream got;
  got << "# method\tpattern\tneed";
  for (const char* p : kPrincipals) got << "\t" << p;
  got << "\n";
  std::set<std::string> seen;
  size_t cells = 0;
  for (const http::Route& route : hub.router().Routes()) {
    const std::string key = std::string(MethodName(route.method)) + " " + route.pattern;
    EXPECT_TRUE(seen.insert(key).second) << "route registered twice: " << key;
    // The path built for the route must reach that route, not an earlier one.
    for (const char* repo : {"pub", "priv"}) {
      EXPECT_EQ(hub.router().Find(route.method, PathFor(route.pattern, repo)), &route)
          << key << " is shadowed for " << PathFor(route.pattern, repo);
    }
    Row row{http::RequirementName(route.need), {}};
    for (const char* who : kPrincipals) {
      row.cells.push_back(Cell(hub, route, who, "pub") + "/" + Cell(hub, route, who, "priv"));
      cells += 2;
    }
    got << MethodName(route.method) << "\t" << route.pattern << "\t" << row.need;
    for (const auto& c : row.cells) got << "\t" << c;
    got << "\n";
    auto it = want.find(key);
    if (it == want.end()) {
      ADD_FAILURE() << "route missing from authz_matrix.tsv: " << key;
      continue;
    }
    EXPECT_EQ(it->second.need, row.need) << key << ": declared requirement";
    for (size_t i = 0; i < row.cells.size(); ++i) {
      EXPECT_EQ(it->second.cells[i], row.cells[i])
          << key << " as " << kPrincipals[i] << " (public/private repo)";
    }
  }
  for (const auto& [key, row] : want) {
    EXPECT_TRUE(seen.contains(key))
        << "authz_matrix.tsv lists a route that does not exist: " << key;
  }
  if (const char* out = std::getenv("HANGAR_AUTHZ_MATRIX_OUT")) {
    std::ofstream(out) << got.str();
  }
  EXPECT_GT(cells, 2000u);  // every API and every web form: well over a hundred routes
}

// The session-only forms, attacked with alice's read token (and her write token, which a
// session-only route refuses too), then used by her browser session.
TEST(AuthzRegression, ReadTokenCannotMintATokenButTheSessionCan) {
  AuthzHub hub;
  for (const char* who : {"read", "write"}) {
    http::Response res = hub.PostForm("/settings/tokens", who, "role=write&name=x");
    EXPECT_EQ(res.status, 403) << who;
    EXPECT_EQ(res.body.find("hf_"), std::string::npos) << who << ": a token was shown";
  }
  auto before = hub.app().authenticator().ListTokens("alice");
  ASSERT_TRUE(before.has_value());
  for (const auto& t : *before) EXPECT_NE(t.name, "x");
  http::Response res = hub.PostForm("/settings/tokens", "session", "role=write&name=x");
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find("hf_"), std::string::npos);
  auto after = hub.app().authenticator().ListTokens("alice");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->size(), before->size() + 1);
}

TEST(AuthzRegression, ReadTokenCannotRevokeTokensButTheSessionCan) {
  AuthzHub hub;
  auto tokens = hub.app().authenticator().ListTokens("alice");
  ASSERT_TRUE(tokens.has_value());
  ASSERT_FALSE(tokens->empty());
  int64_t victim = 0;
  for (const auto& t : *tokens) {
    if (t.role == TokenRole::Write) victim = t.id;
  }
  ASSERT_NE(victim, 0);
  const std::string path = "/settings/tokens/" + std::to_string(victim) + "/revoke";
  EXPECT_EQ(hub.PostForm(path, "read", "").status, 403);
  auto still = hub.app().authenticator().Authenticate("Bearer " + hub.credential("write"));
  EXPECT_TRUE(still.has_value()) << "the write token was revoked by the read token";
  EXPECT_EQ(hub.PostForm(path, "session", "").status, 303);
  auto gone = hub.app().authenticator().ListTokens("alice");
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->size(), tokens->size() - 1);
}

TEST(AuthzRegression, ReadTokenCannotCreateOrgsButTheSessionCan) {
  AuthzHub hub;
  EXPECT_EQ(hub.PostForm("/settings/organizations", "read", "name=evil-org").status, 403);
  EXPECT_EQ(hub.PostForm("/settings/org/acme", "read", "user=bob&role=admin").status, 403);
  http::Request probe = hub.Make(Method::Get, "/evil-org", "anonymous");
  EXPECT_EQ(hub.router().Dispatch(probe).status, 404);
  EXPECT_EQ(hub.PostForm("/settings/organizations", "session", "name=good-org").status, 303);
  http::Request made = hub.Make(Method::Get, "/good-org", "anonymous");
  EXPECT_EQ(hub.router().Dispatch(made).status, 200);
}

// Refused requests are answered from the head: the gate never reads a body.
TEST(AuthzRegression, RefusalsComeBeforeTheBody) {
  AuthzHub hub;
  class Untouchable final : public ByteSource {
   public:
    Result<size_t> Read(std::span<char>) override {
      ADD_FAILURE() << "the body was read";
      return MakeError(ErrorCode::Internal, "read");
    }
  };
  for (const char* path : {"/api/models/acme/pub/commit/main", "/api/repos/create"}) {
    http::Request req = hub.Make(Method::Post, path, "anonymous");
    req.body = std::make_shared<Untouchable>();
    http::Response res = hub.router().Dispatch(req);
    EXPECT_EQ(res.status, 401) << path;
    EXPECT_EQ(res.GetHeader("X-Request-Id"), "authz");
  }
}

}  // namespace
}  // namespace hangar::cli

// Sign-in, tokens, new repos, imports and org members (issue #4: "login/logout",
// "settings pages", "every form protected against CSRF"). Rules live in the services;
// every POST goes through ReadForm (CSRF) and answers 303 (post/redirect/get).

#include <algorithm>
#include <charconv>

#include "core/util.h"
#include "services/git/import_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

Result<void> RequireSignIn(const PageContext& ctx) {
  if (!ctx.signed_in) return MakeError(ErrorCode::Unauthorized, "sign in to see this page");
  return {};
}

// A local redirect target: a path on this site, never another origin. Browsers drop tabs
// and line breaks from a Location (WHATWG URL), so "/\t/evil.com" would become
// "//evil.com": control bytes and backslashes are refused along with "//".
std::string SafeNext(std::string_view next) {
  bool control = std::any_of(next.begin(), next.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
  });
  if (next.empty() || next[0] != '/' || next.starts_with("//") || control) return "/";
  return std::string(next);
}

std::string SessionCookie(const PageContext& ctx, std::string_view value, int64_t max_age) {
  return std::string(kSessionCookie) + "=" + std::string(value) +
         "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age) +
         (ctx.secure_cookies ? "; Secure" : "");
}

Result<http::Response> LoginPage(PageContext& ctx, http::Request& req, std::string error = {},
                                 std::string username = {}) {
  Data data;
  data.set("csrf", ctx.csrf);
  data.set("next", SafeNext(req.Query("next").value_or("/")));
  data.set("username", username);
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 401, "Sign in", "login", data);
}

Result<http::Response> Login(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  auto session = deps.sessions.Login(form.Get("username"), form.Get("password"));
  if (!session) {
    if (session.error().code != ErrorCode::Unauthorized &&
        session.error().code != ErrorCode::BadRequest)
      return std::move(session).error();
    return LoginPage(ctx, req, session.error().message, form.Get("username"));
  }
  http::Response res = SeeOther(ctx, SafeNext(form.Get("next")));
  res.AddHeader("Set-Cookie",
                SessionCookie(ctx, session->cookie, session->session.expires_at - NowUnix()));
  return res;
}

Result<http::Response> Logout(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(deps.sessions.Logout(CookieValue(req, kSessionCookie)));
  http::Response res = SeeOther(ctx, "/");
  res.AddHeader("Set-Cookie", SessionCookie(ctx, "", 0));
  return res;
}

Result<http::Response> Tokens(WebDeps& deps, PageContext& ctx, const services::NewToken* fresh) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(auto tokens, deps.authenticator.ListTokens(ctx.principal.name));
  Data data;
  data.set("csrf", ctx.csrf);
  List list;
  for (const auto& t : tokens) {
    Data o;
    o.set("id", std::to_string(t.id));
    o.set("name", t.name);
    o.set("role", std::string(db::TokenRoleName(t.role)));
    o.set("created", Ago(t.created_at));
    o.set("last_used", t.last_used_at ? Ago(*t.last_used_at) : std::string("never"));
    list.push_back(o);
  }
  data.set("tokens", list);
  if (fresh) {
    Data nt;
    nt.set("name", fresh->record.name);
    nt.set("token", fresh->token);
    data.set("new_token", nt);
  }
  return Html(ctx, 200, "Access tokens", "tokens", data);
}

Result<http::Response> CreateToken(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  auto role = db::ParseTokenRole(form.Get("role"));
  if (!role) return MakeError(ErrorCode::BadRequest, "role must be read or write");
  HANGAR_ASSIGN_OR_RETURN(
      auto token, deps.authenticator.CreateToken(ctx.principal.name, form.Get("name"), *role));
  // The token is shown once, in this response; reloading does not show it again.
  return Tokens(deps, ctx, &token);
}

Result<http::Response> RevokeToken(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  int64_t id = 0;
  std::string_view raw = req.Param("id");
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), id);
  if (ec != std::errc() || p != raw.data() + raw.size())
    return MakeError(ErrorCode::BadRequest, "malformed token id");
  HANGAR_TRY(deps.authenticator.RevokeToken(ctx.principal.name, id));
  return SeeOther(ctx, "/settings/tokens");
}

// The namespaces `ctx` may create repos in: their own, and orgs where they can write.
Result<List> Owners(WebDeps& deps, const PageContext& ctx) {
  List owners;
  owners.push_back(Data(ctx.principal.name));
  HANGAR_ASSIGN_OR_RETURN(auto orgs, deps.accounts.OrgsOfUser(ctx.principal.user_id));
  for (const auto& m : orgs) {
    if (m.role != db::OrgRole::Read) owners.push_back(Data(m.org.name));
  }
  return owners;
}

Result<http::Response> RepoForm(WebDeps& deps, PageContext& ctx, std::string_view tmpl,
                                std::string_view title, const Form* form, std::string error) {
  HANGAR_TRY(RequireSignIn(ctx));
  Data data;
  data.set("csrf", ctx.csrf);
  HANGAR_ASSIGN_OR_RETURN(auto owners, Owners(deps, ctx));
  data.set("owners", owners);
  if (form) {
    data.set("name", form->Get("name"));
    data.set("source", form->Get("source"));
  }
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, title, tmpl, data);
}

// Errors a user can fix in the form are shown on it; the rest become error pages.
bool ShownOnForm(const Error& e) {
  return e.code == ErrorCode::BadRequest || e.code == ErrorCode::Conflict ||
         e.code == ErrorCode::Forbidden;
}

Result<RepoId> RepoIdFromForm(const Form& form) {
  auto type = ParseRepoType(form.Get("type"));
  if (!type) return MakeError(ErrorCode::BadRequest, "type must be model, dataset or space");
  return RepoId::Parse(*type, form.Get("owner"), form.Get("name"));
}

Result<http::Response> CreateRepo(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  auto id = RepoIdFromForm(form);
  Result<db::RepoRecord> made =
      id ? deps.repos.Create(ctx.principal, *id, form.Get("private") == "1") : id.error();
  if (!made) {
    if (!ShownOnForm(made.error())) return std::move(made).error();
    return RepoForm(deps, ctx, "new_repo", "New repository", &form, made.error().message);
  }
  return SeeOther(ctx, RepoPath(made->Id()));
}

Result<http::Response> Import(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  auto id = RepoIdFromForm(form);
  // id.error() of a valid id would throw (std::get on the wrong alternative).
  Result<db::RepoRecord> made =
      id ? MakeError(ErrorCode::Internal, "import did not run") : id.error();
  if (id) {
    services::ImportRequest in;
    in.source = form.Get("source");
    in.type = id->type;
    in.ns = id->ns;
    in.name = id->name;
    in.is_private = form.Get("private") == "1";
    in.allow_local = false;  // a web user must never make the server read its own disk
    made = deps.imports.Import(ctx.principal, in);
  }
  if (!made) {
    if (!ShownOnForm(made.error())) return std::move(made).error();
    return RepoForm(deps, ctx, "import", "Import", &form, made.error().message);
  }
  return SeeOther(ctx, RepoPath(made->Id()));
}

Result<http::Response> Orgs(WebDeps& deps, PageContext& ctx, std::string error = {}) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(auto orgs, deps.accounts.OrgsOfUser(ctx.principal.user_id));
  Data data;
  data.set("csrf", ctx.csrf);
  List list;
  for (const auto& m : orgs) {
    Data o;
    o.set("name", m.org.name);
    o.set("role", std::string(db::OrgRoleName(m.role)));
    o.set("admin", m.role == db::OrgRole::Admin);
    list.push_back(o);
  }
  data.set("orgs", list);
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, "Organizations", "orgs", data);
}

Result<http::Response> CreateOrg(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  auto org = deps.accounts.CreateOrg(form.Get("name"), ctx.principal.name);
  if (!org) {
    if (!ShownOnForm(org.error())) return std::move(org).error();
    return Orgs(deps, ctx, org.error().message);
  }
  return SeeOther(ctx, "/" + EncodeSegment(org->name));
}

Result<http::Response> OrgSettings(WebDeps& deps, PageContext& ctx, http::Request& req,
                                   std::string error = {}) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(std::string name, DecodedParam(req, "org"));
  if (deps.access.NamespaceAccess(ctx.principal, name) != services::Access::Admin)
    return MakeError(ErrorCode::Forbidden, "only admins of " + name + " can manage its members");
  HANGAR_ASSIGN_OR_RETURN(auto org, deps.accounts.FindOrg(name));
  HANGAR_ASSIGN_OR_RETURN(auto members, deps.accounts.Members(org.id));
  Data data;
  data.set("csrf", ctx.csrf);
  data.set("org", org.name);
  data.set("members", MemberList(members));
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, org.name + " members", "org_settings", data);
}

Result<http::Response> AddMember(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_TRY(RequireSignIn(ctx));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_ASSIGN_OR_RETURN(std::string name, DecodedParam(req, "org"));
  if (deps.access.NamespaceAccess(ctx.principal, name) != services::Access::Admin)
    return MakeError(ErrorCode::Forbidden, "only admins of " + name + " can manage its members");
  auto role = db::ParseOrgRole(form.Get("role"));
  if (!role) return OrgSettings(deps, ctx, req, "role must be read, write or admin");
  auto added = deps.accounts.AddMember(name, form.Get("user"), *role);
  if (!added) {
    if (added.error().code != ErrorCode::NotFound && added.error().code != ErrorCode::Conflict)
      return std::move(added).error();
    return OrgSettings(deps, ctx, req, added.error().message);
  }
  return SeeOther(ctx, "/settings/org/" + EncodeSegment(name));
}

}  // namespace

void AddAccountPages(http::Router& router, WebDeps& deps) {
  using M = http::Method;
  using R = Result<http::Response>;
  using http::Requirement;
  // Account settings take a browser session only, never a bearer token of any role
  // (docs/web.md "Who may call what"): a token is a credential handed to scripts, and one
  // that leaks must not mint, list or revoke credentials or run orgs.
  const Requirement session = Requirement::Session();
  AddPage(router, deps, M::Get, "/login", Requirement::Public(),
          [](PageContext& ctx, http::Request& req) -> R { return LoginPage(ctx, req); });
  // Sign-in waits for a password-hashing slot (AccountService).
  AddPage(router, deps, M::Post, "/login", Requirement::Public().Waits(),
          [&deps](PageContext& ctx, http::Request& req) { return Login(deps, ctx, req); });
  // Ends whatever session the cookie names; the form's CSRF token guards it.
  AddPage(router, deps, M::Post, "/logout", Requirement::Public(),
          [&deps](PageContext& ctx, http::Request& req) { return Logout(deps, ctx, req); });
  AddPage(router, deps, M::Get, "/settings/tokens", session,
          [&deps](PageContext& ctx, http::Request&) { return Tokens(deps, ctx, nullptr); });
  AddPage(router, deps, M::Post, "/settings/tokens", session,
          [&deps](PageContext& ctx, http::Request& req) { return CreateToken(deps, ctx, req); });
  AddPage(router, deps, M::Post, "/settings/tokens/{id}/revoke", session,
          [&deps](PageContext& ctx, http::Request& req) { return RevokeToken(deps, ctx, req); });
  AddPage(router, deps, M::Get, "/settings/organizations", session,
          [&deps](PageContext& ctx, http::Request&) { return Orgs(deps, ctx); });
  AddPage(router, deps, M::Post, "/settings/organizations", session,
          [&deps](PageContext& ctx, http::Request& req) { return CreateOrg(deps, ctx, req); });
  // Whether the caller administers {org} is the handler's check (NamespaceAccess).
  AddPage(router, deps, M::Get, "/settings/org/{org}", session,
          [&deps](PageContext& ctx, http::Request& req) { return OrgSettings(deps, ctx, req); });
  AddPage(router, deps, M::Post, "/settings/org/{org}", session,
          [&deps](PageContext& ctx, http::Request& req) { return AddMember(deps, ctx, req); });
  AddPage(router, deps, M::Get, "/new", Requirement::SignedIn(),
          [&deps](PageContext& ctx, http::Request&) {
            return RepoForm(deps, ctx, "new_repo", "New repository", nullptr, {});
          });
  AddPage(router, deps, M::Post, "/new", Requirement::WriteRole(),
          [&deps](PageContext& ctx, http::Request& req) { return CreateRepo(deps, ctx, req); });
  AddPage(router, deps, M::Get, "/import", Requirement::SignedIn(),
          [&deps](PageContext& ctx, http::Request&) {
            return RepoForm(deps, ctx, "import", "Import", nullptr, {});
          });
  AddPage(router, deps, M::Post, "/import", Requirement::WriteRole(),
          [&deps](PageContext& ctx, http::Request& req) { return Import(deps, ctx, req); });
}

}  // namespace hangar::web

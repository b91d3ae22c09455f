// The account's upstream tokens (issue 18 §5, docs/upstream.md) at
// /settings/upstream-tokens: one row per upstream hub of the pull-through cache, each with
// a form to set (or replace) the user's own token and one to remove it. Rules live in
// services::UpstreamCache; every POST goes through ReadForm (CSRF) and answers 303, or the
// page again with the error when the user can fix it in the form.

#include "services/mirror/upstream_cache.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

Result<services::UpstreamCache*> Cache(WebDeps& deps) {
  if (!deps.upstream) {
    return MakeError(ErrorCode::NotFound, "this hub has no upstream hub ([upstream] url)");
  }
  return deps.upstream;
}

Result<http::Response> TokensPage(WebDeps& deps, PageContext& ctx, std::string error = {}) {
  if (!ctx.signed_in) return MakeError(ErrorCode::Unauthorized, "sign in to see this page");
  HANGAR_ASSIGN_OR_RETURN(auto* cache, Cache(deps));
  HANGAR_ASSIGN_OR_RETURN(auto list, cache->UserTokens(ctx.principal));
  List items;
  for (const auto& u : list) {
    Data o;
    o.set("url", u.upstream);
    o.set("token_set", u.token_set);
    o.set("upstream_user", u.upstream_user);
    o.set("set", u.token_set ? Ago(u.set_at) : std::string());
    items.push_back(o);
  }
  Data data;
  data.set("csrf", ctx.csrf);
  data.set("upstreams", items);
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, "Upstream tokens", "upstream_tokens", data);
}

Result<http::Response> SetToken(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* cache, Cache(deps));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"url", "token"}));
  auto set = cache->SetUserToken(ctx.principal, form.Get("url"), form.Get("token"));
  if (!set) {
    // A mistyped or refused token is told on the page (it is never typed back into it).
    if (set.error().code != ErrorCode::BadRequest) return std::move(set).error();
    return TokensPage(deps, ctx, set.error().message);
  }
  return SeeOther(ctx, "/settings/upstream-tokens");
}

Result<http::Response> DeleteToken(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* cache, Cache(deps));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"url"}));
  HANGAR_TRY(cache->DeleteUserToken(ctx.principal, form.Get("url")));
  return SeeOther(ctx, "/settings/upstream-tokens");
}

}  // namespace

void AddUpstreamTokenPages(http::Router& router, WebDeps& deps) {
  using M = http::Method;
  // Account settings: a browser session only, as for tokens and SSH keys.
  const auto session = http::Requirement::Session();
  AddPage(router, deps, M::Get, "/settings/upstream-tokens", session,
          [&deps](PageContext& ctx, http::Request&) { return TokensPage(deps, ctx); });
  AddPage(router, deps, M::Post, "/settings/upstream-tokens", session,
          [&deps](PageContext& ctx, http::Request& req) { return SetToken(deps, ctx, req); });
  AddPage(router, deps, M::Post, "/settings/upstream-tokens/delete", session,
          [&deps](PageContext& ctx, http::Request& req) { return DeleteToken(deps, ctx, req); });
}

}  // namespace hangar::web

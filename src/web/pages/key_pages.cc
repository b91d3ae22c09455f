// SSH keys (issue 18 §1, docs/ssh.md): the account's keys at /settings/ssh-keys, and the
// deploy keys of a repo's settings page. Rules live in services::SshKeyService; every POST
// goes through ReadForm (CSRF) and answers 303 (post/redirect/get), or the page again with
// the error when the user can fix it in the form.

#include "core/util.h"
#include "services/git/ssh_keys.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

// Errors a user can fix in the form (a malformed or already used key, a long title).
bool ShownOnForm(const Error& e) {
  return e.code == ErrorCode::BadRequest || e.code == ErrorCode::Conflict;
}

Data KeyItem(const db::SshKeyRecord& k) {
  Data o;
  o.set("id", std::to_string(k.id));
  o.set("title", k.title);
  o.set("type", k.key_type);
  o.set("fingerprint", k.fingerprint);
  o.set("created", Ago(k.created_at));
  o.set("last_used", k.last_used_at ? Ago(*k.last_used_at) : std::string("never"));
  o.set("read_write", k.read_write);
  return o;
}

Result<services::SshKeyService*> Keys(WebDeps& deps) {
  if (!deps.ssh_keys) return MakeError(ErrorCode::NotFound, "SSH keys are not available here");
  return deps.ssh_keys;
}

// A key id from the route's {id}. Errors: NotFound (no such key).
Result<int64_t> KeyIdParam(const http::Request& req) {
  auto id = ParseRowId(req.Param("id"));
  if (!id) return MakeError(ErrorCode::NotFound, "no such SSH key");
  return *id;
}

Result<http::Response> SshKeysPage(WebDeps& deps, PageContext& ctx, const Form* form = nullptr,
                                   std::string error = {}) {
  if (!ctx.signed_in) return MakeError(ErrorCode::Unauthorized, "sign in to see this page");
  HANGAR_ASSIGN_OR_RETURN(auto* keys, Keys(deps));
  HANGAR_ASSIGN_OR_RETURN(auto list, keys->ListUserKeys(ctx.principal));
  Data data;
  data.set("csrf", ctx.csrf);
  List items;
  for (const auto& k : list) items.push_back(KeyItem(k));
  data.set("keys", items);
  if (form) {
    // What was typed stays in the form, so a typo is fixed rather than pasted again.
    data.set("key", form->Get("key"));
    data.set("title", form->Get("title"));
  }
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, "SSH keys", "ssh_keys", data);
}

Result<http::Response> AddSshKey(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* keys, Keys(deps));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"key", "title"}));
  auto added = keys->AddUserKey(ctx.principal, form.Get("key"), form.Get("title"));
  if (!added) {
    if (!ShownOnForm(added.error())) return std::move(added).error();
    return SshKeysPage(deps, ctx, &form, added.error().message);
  }
  return SeeOther(ctx, "/settings/ssh-keys");
}

Result<http::Response> DeleteSshKey(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* keys, Keys(deps));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_ASSIGN_OR_RETURN(int64_t id, KeyIdParam(req));
  HANGAR_TRY(keys->DeleteUserKey(ctx.principal, id));
  return SeeOther(ctx, "/settings/ssh-keys");
}

Result<http::Response> AddDeployKey(WebDeps& deps, PageContext& ctx, http::Request& req,
                                    RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* keys, Keys(deps));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type, services::Access::Admin));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"key", "title", "read_write"}));
  std::string rw = form.Get("read_write");
  if (!rw.empty() && rw != "1") return MakeError(ErrorCode::BadRequest, "read_write must be 1");
  auto added = keys->AddDeployKey(ctx.principal, repo.record.Id(), form.Get("key"),
                                  form.Get("title"), rw == "1");
  if (!added) {
    if (!ShownOnForm(added.error())) return std::move(added).error();
    return RepoSettingsPage(deps, ctx, repo, &form, added.error().message);
  }
  return SeeOther(ctx, RepoPath(repo.record.Id()) + "/settings");
}

Result<http::Response> DeleteDeployKey(WebDeps& deps, PageContext& ctx, http::Request& req,
                                       RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* keys, Keys(deps));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type, services::Access::Admin));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_ASSIGN_OR_RETURN(int64_t id, KeyIdParam(req));
  HANGAR_TRY(keys->DeleteDeployKey(ctx.principal, repo.record.Id(), id));
  return SeeOther(ctx, RepoPath(repo.record.Id()) + "/settings");
}

}  // namespace

Result<void> SetDeployKeys(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                           Data& data) {
  if (!deps.ssh_keys) return {};
  HANGAR_ASSIGN_OR_RETURN(auto list,
                          deps.ssh_keys->ListDeployKeys(ctx.principal, repo.record.Id()));
  List items;
  for (const auto& k : list) items.push_back(KeyItem(k));
  data.set("deploy_keys", items);
  data.set("ssh_keys_enabled", true);
  return {};
}

void AddKeyPages(http::Router& router, WebDeps& deps) {
  using M = http::Method;
  // Account settings: a browser session only, as for tokens (docs/web.md "Who may call
  // what"): a leaked token must not add a key that outlives its revocation.
  const auto session = http::Requirement::Session();
  AddPage(router, deps, M::Get, "/settings/ssh-keys", session,
          [&deps](PageContext& ctx, http::Request&) { return SshKeysPage(deps, ctx); });
  AddPage(router, deps, M::Post, "/settings/ssh-keys", session,
          [&deps](PageContext& ctx, http::Request& req) { return AddSshKey(deps, ctx, req); });
  AddPage(router, deps, M::Post, "/settings/ssh-keys/{id}/delete", session,
          [&deps](PageContext& ctx, http::Request& req) { return DeleteSshKey(deps, ctx, req); });
}

void AddDeployKeyPages(http::Router& router, WebDeps& deps, RepoType type) {
  using M = http::Method;
  const std::string settings =
      "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/settings/deploy-keys";
  const auto admin = http::Requirement::Repo(type, Access::Admin);
  AddPage(router, deps, M::Post, settings, admin,
          [&deps, type](PageContext& ctx, http::Request& req) {
            return AddDeployKey(deps, ctx, req, type);
          });
  AddPage(router, deps, M::Post, settings + "/{id}/delete", admin,
          [&deps, type](PageContext& ctx, http::Request& req) {
            return DeleteDeployKey(deps, ctx, req, type);
          });
}

}  // namespace hangar::web

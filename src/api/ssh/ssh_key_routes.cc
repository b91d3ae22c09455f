// SSH key and deploy key handlers (docs/ssh.md): parse, call SshKeyService, render.

#include "api/ssh/ssh_key_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::SshKeyService;

// A key body holds one key line (at most 16 KiB) and a title: anything larger is not one.
constexpr size_t kMaxKeyBody = 64 << 10;

json::object KeyJson(const db::SshKeyRecord& k) {
  json::object o{{"id", k.id},
                 {"title", k.title},
                 {"key", k.key_type + " " + k.blob_base64},
                 {"fingerprint", k.fingerprint},
                 {"createdAt", Iso8601(k.created_at)}};
  o["lastUsedAt"] = k.last_used_at ? json::value(Iso8601(*k.last_used_at)) : json::value(nullptr);
  if (k.repo_id != 0) o["readWrite"] = k.read_write;
  return o;
}

json::array KeysJson(const std::vector<db::SshKeyRecord>& keys) {
  json::array out;
  for (const auto& k : keys) out.push_back(KeyJson(k));
  return out;
}

// The {id} route parameter: a positive decimal, else NotFound (no such key).
Result<int64_t> KeyId(const http::Request& req) {
  auto id = ParseRowId(req.Param("id"));
  // Not echoed: the raw path segment would go into X-Error-Message as sent.
  if (!id) return MakeError(ErrorCode::NotFound, "SSH key not found (an id is a positive number)");
  return *id;
}

// The body of an add: {"key": "<type> <base64> [comment]", "title": "…"[, "readWrite": b]}.
struct AddBody {
  std::string key, title;
  bool read_write = false;
};

Result<AddBody> ReadAddBody(http::Request& req, bool deploy) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxKeyBody));
  for (const auto& field : body) {
    // An unknown field is refused, never ignored (a misspelt "readWrite" would otherwise
    // add a read-only key the caller thinks can push).
    if (field.key() != "key" && field.key() != "title" && !(deploy && field.key() == "readWrite"))
      return MakeError(ErrorCode::BadRequest, "unknown field '" + std::string(field.key()) + "'");
  }
  AddBody out;
  HANGAR_ASSIGN_OR_RETURN(out.key, StringField(body, "key"));
  if (out.key.empty()) {
    return MakeError(ErrorCode::BadRequest,
                     "'key' must be an OpenSSH public key (the line of a .pub file)");
  }
  HANGAR_ASSIGN_OR_RETURN(out.title, StringField(body, "title"));
  if (deploy) {
    HANGAR_ASSIGN_OR_RETURN(out.read_write, BoolField(body, "readWrite"));
  }
  return out;
}

http::Response NoContent() {
  http::Response res;
  res.status = 204;
  return res;
}

Result<http::Response> ListOwn(SshKeyService& keys, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto list, keys.ListUserKeys(req.principal));
  return JsonResponse(KeysJson(list));
}

Result<http::Response> AddOwn(SshKeyService& keys, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(AddBody body, ReadAddBody(req, false));
  HANGAR_ASSIGN_OR_RETURN(auto key, keys.AddUserKey(req.principal, body.key, body.title));
  return JsonResponse(KeyJson(key), 201);
}

Result<http::Response> DeleteOwn(SshKeyService& keys, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(int64_t id, KeyId(req));
  HANGAR_TRY(keys.DeleteUserKey(req.principal, id));
  return NoContent();
}

Result<http::Response> ListDeploy(SshKeyService& keys, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto list, keys.ListDeployKeys(req.principal, repo));
  return JsonResponse(KeysJson(list));
}

Result<http::Response> AddDeploy(SshKeyService& keys, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(AddBody body, ReadAddBody(req, true));
  HANGAR_ASSIGN_OR_RETURN(
      auto key, keys.AddDeployKey(req.principal, repo, body.key, body.title, body.read_write));
  return JsonResponse(KeyJson(key), 201);
}

Result<http::Response> DeleteDeploy(SshKeyService& keys, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int64_t id, KeyId(req));
  HANGAR_TRY(keys.DeleteDeployKey(req.principal, repo, id));
  return NoContent();
}

}  // namespace

void AddSshKeyRoutes(http::Router& r, SshKeyService& keys) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  // The body is one key: a larger one is refused from its head.
  auto small = [](http::Request& q) { return CheckDeclaredLength(q, kMaxKeyBody); };
  r.Add(Method::Get, "/api/settings/ssh-keys", ApiFamily::Hf, Requirement::SignedIn(),
        [&keys](http::Request& q) { return ListOwn(keys, q); });
  r.Add(Method::Post, "/api/settings/ssh-keys", ApiFamily::Hf, Requirement::WriteRole().Also(small),
        [&keys](http::Request& q) { return AddOwn(keys, q); });
  r.Add(Method::Delete, "/api/settings/ssh-keys/{id}", ApiFamily::Hf, Requirement::WriteRole(),
        [&keys](http::Request& q) { return DeleteOwn(keys, q); });
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base = "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}/deploy-keys";
    const Requirement admin = Requirement::Repo(t, Access::Admin);
    r.Add(Method::Get, base, ApiFamily::Hf, admin,
          [&keys, t](http::Request& q) { return ListDeploy(keys, q, t); });
    r.Add(Method::Post, base, ApiFamily::Hf, admin.Also(small),
          [&keys, t](http::Request& q) { return AddDeploy(keys, q, t); });
    r.Add(Method::Delete, base + "/{id}", ApiFamily::Hf, admin,
          [&keys, t](http::Request& q) { return DeleteDeploy(keys, q, t); });
  }
}

}  // namespace hangar::api

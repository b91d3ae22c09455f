// Mirror handlers (docs/mirrors.md): parse, call MirrorService, render.

#include "api/mirror/mirror_routes.h"

#include <algorithm>

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::MirrorService;

constexpr size_t kMaxMirrorBody = 64 << 10;

json::value TimeOrNull(const std::optional<int64_t>& t) {
  return t ? json::value(Iso8601(*t)) : json::value(nullptr);
}

json::object MirrorJson(const db::MirrorRecord& m) {
  const bool pull = m.direction == db::MirrorDirection::Pull;
  json::object o{{"id", m.id},
                 {"direction", db::MirrorDirectionName(m.direction)},
                 {"url", services::RedactImportSource(m.url)},
                 {"hasCredential", !m.credential.empty()},
                 {"createdAt", Iso8601(m.created_at)},
                 {"lastSyncAt", TimeOrNull(m.last_sync_at)},
                 {"lastSuccessAt", TimeOrNull(m.last_success_at)},
                 {"lastError", m.last_error},
                 {"failures", m.failures}};
  if (pull) {
    o["intervalSeconds"] = m.interval_s;
    o["nextSyncAt"] = Iso8601(m.next_sync_at);
  }
  return o;
}

// Refuses a field outside `known`: a misspelt one is never silently ignored.
Result<void> OnlyFields(const json::object& body, std::initializer_list<std::string_view> known) {
  for (const auto& field : body) {
    if (std::find(known.begin(), known.end(), field.key()) == known.end())
      return MakeError(ErrorCode::BadRequest, "unknown field '" + std::string(field.key()) + "'");
  }
  return {};
}

Result<http::Response> CreatePull(MirrorService& mirrors, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxMirrorBody));
  HANGAR_TRY(OnlyFields(
      body, {"name", "organization", "type", "private", "url", "credential", "intervalSeconds"}));
  services::PullMirrorRequest in;
  HANGAR_ASSIGN_OR_RETURN(in.id, RepoFromBody(body, req.principal));
  HANGAR_ASSIGN_OR_RETURN(in.is_private, BoolField(body, "private"));
  HANGAR_ASSIGN_OR_RETURN(in.url, StringField(body, "url"));
  if (in.url.empty()) return MakeError(ErrorCode::BadRequest, "'url' names the upstream");
  HANGAR_ASSIGN_OR_RETURN(in.credential, StringField(body, "credential"));
  if (const json::value* interval = body.if_contains("intervalSeconds")) {
    if (!interval->is_int64() || interval->get_int64() <= 0)
      return MakeError(ErrorCode::BadRequest, "'intervalSeconds' must be a positive integer");
    in.interval_s = interval->get_int64();
  }
  HANGAR_ASSIGN_OR_RETURN(auto made, mirrors.CreatePull(req.principal, in));
  json::object out{{"id", made.first.Id().Id()},
                   {"type", RepoTypeName(made.first.type)},
                   {"private", made.first.is_private},
                   {"mirror", MirrorJson(made.second)}};
  return JsonResponse(out, 201);
}

Result<http::Response> List(MirrorService& mirrors, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto list, mirrors.List(req.principal, repo));
  json::array out;
  for (const auto& m : list) out.push_back(MirrorJson(m));
  return JsonResponse(out);
}

Result<http::Response> AddPush(MirrorService& mirrors, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxMirrorBody));
  HANGAR_TRY(OnlyFields(body, {"url", "credential"}));
  services::PushMirrorRequest in;
  HANGAR_ASSIGN_OR_RETURN(in.url, StringField(body, "url"));
  if (in.url.empty()) return MakeError(ErrorCode::BadRequest, "'url' names the remote");
  HANGAR_ASSIGN_OR_RETURN(in.credential, StringField(body, "credential"));
  HANGAR_ASSIGN_OR_RETURN(auto added, mirrors.AddPush(req.principal, repo, in));
  return JsonResponse(MirrorJson(added), 201);
}

Result<http::Response> Sync(MirrorService& mirrors, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int queued, mirrors.RequestSync(req.principal, repo));
  return JsonResponse(json::object{{"queued", queued}}, 202);
}

Result<http::Response> Remove(MirrorService& mirrors, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  auto id = ParseRowId(req.Param("id"));
  if (!id) return MakeError(ErrorCode::NotFound, "mirror not found (an id is a positive number)");
  HANGAR_TRY(mirrors.Remove(req.principal, repo, *id));
  http::Response res;
  res.status = 204;
  return res;
}

json::object UpstreamJson(const services::UpstreamTokenInfo& u) {
  json::object o{{"url", u.upstream}, {"tokenSet", u.token_set}};
  o["upstreamUser"] = u.token_set ? json::value(u.upstream_user) : json::value(nullptr);
  o["setAt"] = u.token_set ? json::value(Iso8601(u.set_at)) : json::value(nullptr);
  return o;
}

// Every upstream token route answers so when the hub has no upstream.
Result<services::UpstreamCache*> Cache(services::UpstreamCache* cache) {
  if (cache == nullptr) {
    return MakeError(ErrorCode::NotFound, "this hub has no upstream hub ([upstream] url)");
  }
  return cache;
}

Result<http::Response> ListUpstreamTokens(services::UpstreamCache* cache, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* c, Cache(cache));
  HANGAR_ASSIGN_OR_RETURN(auto list, c->UserTokens(req.principal));
  json::array out;
  for (const auto& u : list) out.push_back(UpstreamJson(u));
  return JsonResponse(out);
}

Result<http::Response> SetUpstreamToken(services::UpstreamCache* cache, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* c, Cache(cache));
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxMirrorBody));
  HANGAR_TRY(OnlyFields(body, {"url", "token"}));
  HANGAR_ASSIGN_OR_RETURN(std::string url, StringField(body, "url"));
  HANGAR_ASSIGN_OR_RETURN(std::string token, StringField(body, "token"));
  HANGAR_ASSIGN_OR_RETURN(auto set, c->SetUserToken(req.principal, url, token));
  return JsonResponse(UpstreamJson(set));
}

Result<http::Response> DeleteUpstreamToken(services::UpstreamCache* cache, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto* c, Cache(cache));
  HANGAR_TRY(c->DeleteUserToken(req.principal, req.Query("url").value_or("")));
  http::Response res;
  res.status = 204;
  return res;
}

}  // namespace

void AddUpstreamTokenRoutes(http::Router& r, services::UpstreamCache* cache) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  const std::string path = "/api/settings/upstream-tokens";
  auto small = [](http::Request& q) { return CheckDeclaredLength(q, kMaxMirrorBody); };
  r.Add(Method::Get, path, ApiFamily::Hf, Requirement::SignedIn(),
        [cache](http::Request& q) { return ListUpstreamTokens(cache, q); });
  r.Add(Method::Put, path, ApiFamily::Hf, Requirement::WriteRole().Also(small),
        [cache](http::Request& q) { return SetUpstreamToken(cache, q); });
  r.Add(Method::Delete, path, ApiFamily::Hf, Requirement::WriteRole(),
        [cache](http::Request& q) { return DeleteUpstreamToken(cache, q); });
}

void AddMirrorRoutes(http::Router& r, MirrorService& mirrors) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  auto small = [](http::Request& q) { return CheckDeclaredLength(q, kMaxMirrorBody); };
  r.Add(Method::Post, "/api/repos/mirror", ApiFamily::Hf, Requirement::WriteRole().Also(small),
        [&mirrors](http::Request& q) { return CreatePull(mirrors, q); });
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base = "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}/mirrors";
    const Requirement admin = Requirement::Repo(t, Access::Admin);
    r.Add(Method::Get, base, ApiFamily::Hf, Requirement::Repo(t, Access::Read),
          [&mirrors, t](http::Request& q) { return List(mirrors, q, t); });
    r.Add(Method::Post, base, ApiFamily::Hf, admin.Also(small),
          [&mirrors, t](http::Request& q) { return AddPush(mirrors, q, t); });
    r.Add(Method::Post, base + "/sync", ApiFamily::Hf, admin,
          [&mirrors, t](http::Request& q) { return Sync(mirrors, q, t); });
    r.Add(Method::Delete, base + "/{id}", ApiFamily::Hf, admin,
          [&mirrors, t](http::Request& q) { return Remove(mirrors, q, t); });
  }
}

}  // namespace hangar::api

// The registry's /api/v1 face (registry_routes.h): parameters and bodies parsed here, one
// RegistryService call each, the records rendered by registry_json.h.

#include "api/registry/registry_routes.h"

#include "api/json_util.h"
#include "api/registry/registry_json.h"
#include "api/registry/registry_params.h"
#include "api/response_cache.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using http::Method;
using http::Request;
using http::Requirement;
using http::Response;
using services::RegistryService;

constexpr int64_t kVersionsShown = 20;

// A query parameter as an integer in [lo, hi], `fallback` when absent. Errors: BadRequest.
Result<int64_t> IntParam(const Request& q, std::string_view key, int64_t fallback, int64_t lo,
                         int64_t hi) {
  auto raw = q.Query(key);
  if (!raw) return fallback;
  auto n = ParseUint64(*raw);
  if (!n || static_cast<int64_t>(*n) < lo || *n > static_cast<uint64_t>(hi))
    return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be an integer from " +
                                                std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int64_t>(*n);
}

std::string Name(const Request& q) { return std::string(q.Param("name")); }

// The version fields of a body; `prefix` is "version_" in a POST /api/v1/models body,
// where description and tags name the model's.
Result<services::NewVersion> ParseNewVersion(const json::object& b, const std::string& prefix) {
  services::NewVersion v;
  HANGAR_ASSIGN_OR_RETURN(v.repo, StringField(b, "repo"));
  if (v.repo.empty()) return MakeError(ErrorCode::BadRequest, "'repo' is required: \"ns/name\"");
  HANGAR_ASSIGN_OR_RETURN(std::string type, StringField(b, "repo_type"));
  if (!type.empty()) {
    auto t = ParseRepoType(type);
    if (!t) return MakeError(ErrorCode::BadRequest, "'repo_type' must be model, dataset or space");
    v.repo_type = *t;
  }
  HANGAR_ASSIGN_OR_RETURN(v.revision, StringField(b, "revision"));
  HANGAR_ASSIGN_OR_RETURN(v.description, StringField(b, prefix + "description"));
  HANGAR_ASSIGN_OR_RETURN(v.run_id, StringField(b, "run_id"));
  HANGAR_ASSIGN_OR_RETURN(v.run_link, StringField(b, "run_link"));
  HANGAR_ASSIGN_OR_RETURN(v.datasets, registry::StringListField(b, "datasets"));
  HANGAR_ASSIGN_OR_RETURN(v.base_model, StringField(b, "base_model"));
  HANGAR_ASSIGN_OR_RETURN(v.tags, registry::StringMapField(b, prefix + "tags"));
  return v;
}

json::object VersionOut(const db::ModelRecord& m, const db::VersionRecord& v, const Request& q) {
  return registry::VersionJson(m, v, q.base_url);
}

Result<Response> ListModels(RegistryService& r, Request& q) {
  services::ModelFilter f;
  HANGAR_ASSIGN_OR_RETURN(f.limit, IntParam(q, "limit", 50, 1, 1000));
  HANGAR_ASSIGN_OR_RETURN(f.offset, IntParam(q, "offset", 0, 0, INT64_MAX / 2));
  f.owner = q.Query("owner").value_or("");
  f.search = q.Query("search").value_or("");
  if (auto tag = q.Query("tag")) {
    size_t eq = tag->find('=');
    f.tag_key = tag->substr(0, eq);
    if (eq != std::string::npos) f.tag_value = tag->substr(eq + 1);
  }
  std::string sort = q.Query("sort").value_or("name");
  if (sort != "name" && sort != "updated")
    return MakeError(ErrorCode::BadRequest, "'sort' must be name or updated");
  f.newest_first = sort == "updated";
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListModels(q.principal, f));
  json::array models;
  for (const auto& m : page.models) models.push_back(registry::ModelJson(m));
  json::value next = nullptr;
  if (page.next_offset) next = page.next_offset;
  return JsonResponse(json::object{{"models", std::move(models)}, {"next_offset", next}});
}

Result<Response> GetModel(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(q.principal, Name(q)));
  services::VersionFilter f;
  f.name = m.name;
  f.limit = kVersionsShown;
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListVersions(q.principal, f));
  json::object out = registry::ModelJson(m);
  json::array versions;
  for (const auto& v : page.versions) versions.push_back(VersionOut(m, v, q));
  out["versions"] = std::move(versions);
  return JsonResponse(out);
}

Result<Response> Register(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(json::object b, ReadJsonObject(q, kMaxRegistryBody));
  services::NewModel m;
  HANGAR_ASSIGN_OR_RETURN(m.name, StringField(b, "name"));
  if (m.name.empty()) return MakeError(ErrorCode::BadRequest, "'name' is required");
  HANGAR_ASSIGN_OR_RETURN(m.owner, StringField(b, "owner"));
  HANGAR_ASSIGN_OR_RETURN(m.description, StringField(b, "description"));
  HANGAR_ASSIGN_OR_RETURN(m.is_private, BoolField(b, "private"));
  HANGAR_ASSIGN_OR_RETURN(m.tags, registry::StringMapField(b, "tags"));
  if (!b.contains("repo")) {
    HANGAR_ASSIGN_OR_RETURN(auto model, r.CreateModel(q.principal, m));
    return JsonResponse(json::object{{"model", registry::ModelJson(model)}}, 201);
  }
  HANGAR_ASSIGN_OR_RETURN(auto v, ParseNewVersion(b, "version_"));
  HANGAR_ASSIGN_OR_RETURN(auto done, r.Register(q.principal, m, v));
  return JsonResponse(json::object{{"model", registry::ModelJson(done.first)},
                                   {"version", VersionOut(done.first, done.second, q)}},
                      201);
}

Result<Response> RegisterVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(json::object b, ReadJsonObject(q, kMaxRegistryBody));
  HANGAR_ASSIGN_OR_RETURN(auto v, ParseNewVersion(b, ""));
  HANGAR_ASSIGN_OR_RETURN(auto done, r.RegisterVersion(q.principal, Name(q), v));
  return JsonResponse(VersionOut(done.first, done.second, q), 201);
}

Result<Response> ListVersions(RegistryService& r, Request& q) {
  services::VersionFilter f;
  f.name = Name(q);
  HANGAR_ASSIGN_OR_RETURN(f.limit, IntParam(q, "limit", 50, 1, 1000));
  HANGAR_ASSIGN_OR_RETURN(f.offset, IntParam(q, "offset", 0, 0, INT64_MAX / 2));
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(q.principal, f.name));
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListVersions(q.principal, f));
  json::array versions;
  for (const auto& v : page.versions) versions.push_back(VersionOut(m, v, q));
  json::value next = nullptr;
  if (page.next_offset) next = page.next_offset;
  return JsonResponse(json::object{{"versions", std::move(versions)}, {"next_offset", next}});
}

Result<Response> GetVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(int64_t n, registry::VersionNumber(q.Param("version")));
  HANGAR_ASSIGN_OR_RETURN(auto v, r.GetVersion(q.principal, Name(q), n));
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(q.principal, Name(q)));
  return JsonResponse(VersionOut(m, v, q));
}

json::value VersionOrNull(int64_t n) { return n ? json::value(n) : json::value(nullptr); }

Result<Response> MoveAlias(RegistryService& r, Request& q, bool remove) {
  std::string alias(q.Param("alias"));
  std::optional<int64_t> version;
  if (!remove) {
    HANGAR_ASSIGN_OR_RETURN(json::object b, ReadJsonObject(q, kMaxRegistryBody));
    HANGAR_ASSIGN_OR_RETURN(version, registry::VersionField(b, "version"));
  }
  HANGAR_ASSIGN_OR_RETURN(int64_t prior, r.MoveAlias(q.principal, Name(q), alias, version));
  return JsonResponse(json::object{{"alias", alias},
                                   {"version", VersionOrNull(version.value_or(0))},
                                   {"previous", VersionOrNull(prior)}});
}

Result<Response> AliasLog(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(int64_t before, IntParam(q, "before", 0, 0, INT64_MAX / 2));
  HANGAR_ASSIGN_OR_RETURN(int64_t limit, IntParam(q, "limit", 100, 1, 1000));
  // One more than asked: whether an older page exists.
  HANGAR_ASSIGN_OR_RETURN(auto events, r.AliasLog(q.principal, Name(q), before, limit + 1));
  bool more = static_cast<int64_t>(events.size()) > limit;
  if (more) events.pop_back();
  json::array out;
  for (const auto& e : events)
    out.push_back(json::object{{"id", e.id},
                               {"alias", e.alias},
                               {"from", VersionOrNull(e.from_version)},
                               {"to", VersionOrNull(e.to_version)},
                               {"actor", e.actor},
                               {"at", Iso8601Millis(e.at)},
                               {"at_ms", e.at}});
  json::value next = nullptr;
  if (more) next = events.back().id;
  return JsonResponse(json::object{{"events", std::move(out)}, {"next_before", next}});
}

Result<Response> SetRole(RegistryService& r, Request& q, bool remove) {
  std::optional<std::string> role;
  if (!remove) {
    HANGAR_ASSIGN_OR_RETURN(json::object b, ReadJsonObject(q, kMaxRegistryBody));
    HANGAR_ASSIGN_OR_RETURN(std::string given, StringField(b, "role"));
    if (given.empty()) return MakeError(ErrorCode::BadRequest, "'role' is required: \"deployer\"");
    role = given;
  }
  std::string user(q.Param("user"));
  HANGAR_TRY(r.SetRole(q.principal, Name(q), user, role));
  json::value shown = nullptr;
  if (role) shown = json::string(*role);
  return JsonResponse(json::object{{"user", user}, {"role", shown}});
}

}  // namespace

void AddRegistryRoutes(http::Router& router, RegistryService& r) {
  // The hot reads' answers, kept while the registry has not changed (response_cache.h);
  // owned by the handlers, so it lives as long as the router.
  auto cache = std::make_shared<ResponseCache>();
  auto add = [&](Method m, std::string path, Requirement req,
                 std::function<Result<Response>(Request&)> h) {
    router.Add(m, std::move(path), http::ApiFamily::Hf, std::move(req), std::move(h));
  };
  const Requirement read = Requirement::Public();
  const Requirement write = Requirement::WriteRole().Also(
      [](Request& q) { return CheckDeclaredLength(q, kMaxRegistryBody); });
  add(Method::Get, "/health", read, [](Request&) -> Result<Response> {
    return JsonResponse(json::object{{"status", "ok"}});
  });
  add(Method::Get, "/api/v1/models", read, [&r, cache](Request& q) {
    return CachedJson(*cache, r.Generation(), q, [&] { return ListModels(r, q); });
  });
  add(Method::Post, "/api/v1/models", write, [&r](Request& q) { return Register(r, q); });
  add(Method::Get, "/api/v1/models/{name}", read, [&r, cache](Request& q) {
    return CachedJson(*cache, r.Generation(), q, [&] { return GetModel(r, q); });
  });
  add(Method::Post, "/api/v1/models/{name}/versions", write,
      [&r](Request& q) { return RegisterVersion(r, q); });
  add(Method::Get, "/api/v1/models/{name}/versions", read,
      [&r](Request& q) { return ListVersions(r, q); });
  add(Method::Get, "/api/v1/models/{name}/versions/{version}", read,
      [&r](Request& q) { return GetVersion(r, q); });
  add(Method::Get, "/api/v1/models/{name}/aliases/log", read,
      [&r](Request& q) { return AliasLog(r, q); });
  add(Method::Put, "/api/v1/models/{name}/aliases/{alias}", write,
      [&r](Request& q) { return MoveAlias(r, q, false); });
  add(Method::Delete, "/api/v1/models/{name}/aliases/{alias}", write,
      [&r](Request& q) { return MoveAlias(r, q, true); });
  add(Method::Put, "/api/v1/models/{name}/roles/{user}", write,
      [&r](Request& q) { return SetRole(r, q, false); });
  add(Method::Delete, "/api/v1/models/{name}/roles/{user}", write,
      [&r](Request& q) { return SetRole(r, q, true); });
  registry::AddMlflowRoutes(router, r);
}

}  // namespace hangar::api

// The gateway's management API (gateway_routes.h): bodies parsed here, one GatewayService
// call each.

#include "api/gateway/gateway_routes.h"

#include "api/json_util.h"
#include "api/response_cache.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using http::Method;
using http::Request;
using http::Requirement;
using http::Response;
using services::GatewayService;

// A route as gateway_routes.h shows it; backends' URLs to site admins only (they name
// hosts of the infrastructure).
json::object RouteJson(const services::RouteView& v, const Principal& who) {
  const db::RouteRecord& r = v.route;
  json::array backends;
  for (const auto& b : r.backends) {
    json::object out{{"kind", b.kind}, {"weight", b.weight}};
    if (b.kind == "runtime") {
      out["runtime"] = b.target;  // a template's name: no host in it
    } else if (who.is_admin) {
      out["url"] = b.target;
    }
    backends.push_back(std::move(out));
  }
  json::value version = nullptr, commit = nullptr, repo = nullptr, alias = nullptr;
  if (v.version) {
    version = v.version->version;
    commit = json::string(v.version->commit);
    repo = json::string(v.version->repo);
  }
  if (!r.target_alias.empty()) alias = json::string(r.target_alias);
  json::object out{
      {"name", r.name},
      {"model", r.model},
      {"alias", alias},
      {"version", version},
      {"commit", commit},
      {"repo", repo},
      {"protocol", r.protocol},
      {"fallback", r.fallback.empty() ? json::value(nullptr) : json::value(r.fallback)},
      {"timeout_ms", r.timeout_ms},
      {"retries", r.retries},
      {"limits",
       {{"requests_per_minute", r.requests_per_minute},
        {"tokens_per_minute", r.tokens_per_minute}}},
      {"backends", std::move(backends)},
      {"created_at", Iso8601Millis(r.created_at)},
      {"updated_at", Iso8601Millis(r.updated_at)}};
  if (!v.problem.empty()) out["problem"] = v.problem;
  return out;
}

// An integer member in [0, 2^53], `fallback` when absent. Errors: BadRequest.
Result<int64_t> IntField(const json::object& o, std::string_view key, int64_t fallback) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return fallback;
  if (v->is_int64() && v->as_int64() >= 0 && v->as_int64() <= (int64_t{1} << 53))
    return v->as_int64();
  return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' must be a whole number");
}

Result<services::NewRoute> ParseRoute(Request& q) {
  HANGAR_ASSIGN_OR_RETURN(json::object b, ReadJsonObject(q, kMaxRegistryBody));
  services::NewRoute r;
  HANGAR_ASSIGN_OR_RETURN(r.name, StringField(b, "name"));
  HANGAR_ASSIGN_OR_RETURN(r.model, StringField(b, "model"));
  HANGAR_ASSIGN_OR_RETURN(r.alias, StringField(b, "alias"));
  HANGAR_ASSIGN_OR_RETURN(r.version, IntField(b, "version", 0));
  HANGAR_ASSIGN_OR_RETURN(std::string protocol, StringField(b, "protocol"));
  if (!protocol.empty()) r.protocol = protocol;
  HANGAR_ASSIGN_OR_RETURN(r.fallback, StringField(b, "fallback"));
  HANGAR_ASSIGN_OR_RETURN(r.timeout_ms, IntField(b, "timeout_ms", r.timeout_ms));
  HANGAR_ASSIGN_OR_RETURN(r.retries, IntField(b, "retries", r.retries));
  json::object limits;
  if (const auto* l = b.if_contains("limits"); l && !l->is_null()) {
    if (!l->is_object()) return MakeError(ErrorCode::BadRequest, "'limits' must be an object");
    limits = l->as_object();
  }
  HANGAR_ASSIGN_OR_RETURN(r.requests_per_minute, IntField(limits, "requests_per_minute", 0));
  HANGAR_ASSIGN_OR_RETURN(r.tokens_per_minute, IntField(limits, "tokens_per_minute", 0));
  const json::value* backends = b.if_contains("backends");
  if (!backends || !backends->is_array())
    return MakeError(ErrorCode::BadRequest,
                     "'backends' is required: [{\"url\": \"http://…\", \"weight\": 100}] or "
                     "[{\"runtime\": \"<template>\"}]");
  for (const auto& item : backends->as_array()) {
    if (!item.is_object())
      return MakeError(ErrorCode::BadRequest, "each backend is an object {url, weight}");
    db::BackendRecord rec;
    HANGAR_ASSIGN_OR_RETURN(rec.kind, StringField(item.as_object(), "kind"));
    if (rec.kind.empty()) rec.kind = item.as_object().contains("runtime") ? "runtime" : "url";
    HANGAR_ASSIGN_OR_RETURN(
        rec.target, StringField(item.as_object(), rec.kind == "runtime" ? "runtime" : "url"));
    HANGAR_ASSIGN_OR_RETURN(rec.weight, IntField(item.as_object(), "weight", 100));
    r.backends.push_back(std::move(rec));
    if (r.backends.size() > 16) break;  // the service refuses more; stop parsing
  }
  return r;
}

Result<Response> List(GatewayService& g, Request& q) {
  int64_t limit = 100, offset = 0;
  for (auto [key, out] : {std::pair{"limit", &limit}, std::pair{"offset", &offset}}) {
    auto raw = q.Query(key);
    if (!raw) continue;
    auto n = ParseUint64(*raw);
    if (!n || *n > static_cast<uint64_t>(INT64_MAX / 2))
      return MakeError(ErrorCode::BadRequest, std::string("'") + key + "' must be a number");
    *out = static_cast<int64_t>(*n);
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, g.ListRoutes(q.principal, offset, limit));
  json::array routes;
  for (const auto& v : page.routes) routes.push_back(RouteJson(v, q.principal));
  json::value next = nullptr;
  if (page.next_offset) next = page.next_offset;
  return JsonResponse(json::object{{"routes", std::move(routes)}, {"next_offset", next}});
}

// GET /v1/models (OpenAI's "list models"): the routes the caller may see, as models.
Result<Response> OpenAiModels(GatewayService& g, Request& q) {
  json::array data;
  for (int64_t offset = 0;;) {
    HANGAR_ASSIGN_OR_RETURN(auto page, g.ListRoutes(q.principal, offset, 1000));
    for (const auto& v : page.routes)
      if (v.route.protocol == "openai")  // an OIP route is no model of this API
        data.push_back(json::object{{"id", v.route.name},
                                    {"object", "model"},
                                    {"created", v.route.created_at / 1000},
                                    {"owned_by", v.route.owner}});
    if (!page.next_offset) break;
    offset = page.next_offset;
  }
  return JsonResponse(json::object{{"object", "list"}, {"data", std::move(data)}});
}

}  // namespace

void AddGatewayRoutes(http::Router& router, GatewayService& g) {
  auto cache = std::make_shared<ResponseCache>();  // as the registry's (registry_routes.cc)
  auto add = [&](Method m, std::string path, Requirement req,
                 std::function<Result<Response>(Request&)> h) {
    router.Add(m, std::move(path), http::ApiFamily::Hf, std::move(req), std::move(h));
  };
  const Requirement read = Requirement::Public();
  const Requirement write = Requirement::WriteRole().Also(
      [](Request& q) { return CheckDeclaredLength(q, kMaxRegistryBody); });
  add(Method::Get, "/api/v1/gateway/routes", read, [&g, cache](Request& q) {
    return CachedJson(*cache, g.Generation(), q, [&] { return List(g, q); });
  });
  add(Method::Post, "/api/v1/gateway/routes", write, [&g](Request& q) -> Result<Response> {
    HANGAR_ASSIGN_OR_RETURN(auto r, ParseRoute(q));
    HANGAR_ASSIGN_OR_RETURN(auto v, g.CreateRoute(q.principal, r));
    return JsonResponse(RouteJson(v, q.principal), 201);
  });
  // The OpenAI face (docs/gateway.md): hub tokens are its API keys.
  router.Add(Method::Get, "/v1/models", http::ApiFamily::OpenAi, Requirement::SignedIn(),
             [&g, cache](Request& q) {
               return CachedJson(*cache, g.Generation(), q, [&] { return OpenAiModels(g, q); });
             });
  add(Method::Get, "/api/v1/gateway/routes/{name}", read, [&g](Request& q) -> Result<Response> {
    HANGAR_ASSIGN_OR_RETURN(auto v, g.GetRoute(q.principal, std::string(q.Param("name"))));
    return JsonResponse(RouteJson(v, q.principal));
  });
  add(Method::Put, "/api/v1/gateway/routes/{name}", write, [&g](Request& q) -> Result<Response> {
    HANGAR_ASSIGN_OR_RETURN(auto r, ParseRoute(q));
    HANGAR_ASSIGN_OR_RETURN(auto v, g.UpdateRoute(q.principal, std::string(q.Param("name")), r));
    return JsonResponse(RouteJson(v, q.principal));
  });
  add(Method::Delete, "/api/v1/gateway/routes/{name}", write, [&g](Request& q) -> Result<Response> {
    HANGAR_TRY(g.DeleteRoute(q.principal, std::string(q.Param("name"))));
    return JsonResponse(json::object{{"deleted", std::string(q.Param("name"))}});
  });
}

}  // namespace hangar::api

// Webhook handlers (docs/webhooks.md): parse, call WebhookService, render.

#include "api/webhook/webhook_routes.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::WebhookService;

// A webhook body: up to 100 watched items with their names, a URL, a secret.
constexpr size_t kMaxWebhookBody = 64 << 10;

json::object WebhookJson(const db::WebhookRecord& w) {
  json::array watched;
  for (const auto& x : w.watched)
    watched.push_back(json::object{{"type", x.kind}, {"name", x.name}});
  json::array domains;
  for (const auto& d : w.domains) domains.push_back(json::string(d));
  return json::object{{"id", w.id},
                      {"url", w.url},
                      {"job", nullptr},
                      {"watched", std::move(watched)},
                      {"domains", std::move(domains)},
                      {"secret", w.secret.empty() ? json::value(nullptr) : json::value(w.secret)},
                      {"disabled", w.disabled},
                      {"createdAt", Iso8601Millis(w.created_at)},
                      {"updatedAt", Iso8601Millis(w.updated_at)}};
}

http::Response One(const db::WebhookRecord& w) {
  return JsonResponse(json::object{{"webhook", WebhookJson(w)}});
}

// The webhook id of the path.
std::string IdOf(const http::Request& req) { return PercentDecode(req.Param("id")); }

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

// The fields huggingface_hub sends, checked for their types; any other field is refused,
// so a typo is never silently ignored.
Result<services::WebhookSpec> ParseSpec(const json::object& body) {
  services::WebhookSpec spec;
  for (const auto& [key, value] : body) {
    if (key == "url") {
      if (!value.is_string()) return Bad("'url' must be a string");
      spec.url = std::string(value.get_string());
    } else if (key == "secret") {
      if (value.is_null()) continue;
      if (!value.is_string()) return Bad("'secret' must be a string or null");
      spec.secret = std::string(value.get_string());
    } else if (key == "domains") {
      if (value.is_null()) continue;
      if (!value.is_array()) return Bad("'domains' must be an array of strings");
      std::vector<std::string> domains;
      for (const auto& d : value.get_array()) {
        if (!d.is_string()) return Bad("'domains' must be an array of strings");
        domains.emplace_back(d.get_string());
      }
      spec.domains = std::move(domains);
    } else if (key == "watched") {
      if (!value.is_array()) return Bad("'watched' must be an array of {type, name}");
      std::vector<db::WebhookWatch> watched;
      for (const auto& x : value.get_array()) {
        const json::object* o = x.if_object();
        const json::value* type = o ? o->if_contains("type") : nullptr;
        const json::value* name = o ? o->if_contains("name") : nullptr;
        if (!type || !name || !type->is_string() || !name->is_string() || o->size() != 2) {
          return Bad("'watched' must be an array of {type, name} with string values");
        }
        watched.push_back({std::string(type->get_string()), std::string(name->get_string())});
      }
      spec.watched = std::move(watched);
    } else if (key == "jobSourceId" || key == "job") {
      return Bad("Hangar runs no jobs: a webhook takes a 'url'");
    } else {
      return Bad("unknown field '" + std::string(key).substr(0, 40) + "'");
    }
  }
  return spec;
}

Result<http::Response> List(WebhookService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto hooks, s.List(req.principal));
  json::array out;
  for (const auto& w : hooks) out.push_back(WebhookJson(w));
  return JsonResponse(out);
}

Result<http::Response> Create(WebhookService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxWebhookBody));
  HANGAR_ASSIGN_OR_RETURN(auto spec, ParseSpec(body));
  HANGAR_ASSIGN_OR_RETURN(auto w, s.Create(req.principal, spec));
  return One(w);
}

Result<http::Response> Update(WebhookService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxWebhookBody));
  HANGAR_ASSIGN_OR_RETURN(auto spec, ParseSpec(body));
  HANGAR_ASSIGN_OR_RETURN(auto w, s.Update(req.principal, IdOf(req), spec));
  return One(w);
}

Result<http::Response> SetDisabled(WebhookService& s, http::Request& req, bool disabled) {
  // huggingface_hub sends no body; whatever comes is read (capped at the head) and ignored.
  HANGAR_ASSIGN_OR_RETURN(std::string ignored, req.ReadBody(kMaxWebhookBody));
  HANGAR_ASSIGN_OR_RETURN(auto w, s.SetDisabled(req.principal, IdOf(req), disabled));
  return One(w);
}

Result<http::Response> Delete(WebhookService& s, http::Request& req) {
  HANGAR_TRY(s.Delete(req.principal, IdOf(req)));
  return JsonResponse(json::object{});
}

Result<http::Response> Deliveries(WebhookService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(int limit, LimitQuery(req, 20, 100));
  HANGAR_ASSIGN_OR_RETURN(auto log, s.Deliveries(req.principal, IdOf(req), limit));
  json::array out;
  for (const auto& d : log) {
    out.push_back(json::object{{"id", json::value(d.id)},
                               {"event", d.event},
                               {"repo", d.repo},
                               {"attempt", d.attempt},
                               {"status", d.status},
                               {"ok", d.error.empty()},
                               {"error", d.error},
                               {"latencyMs", d.latency_ms},
                               {"createdAt", Iso8601Millis(d.created_at)}});
  }
  return JsonResponse(out);
}

}  // namespace

void AddWebhookRoutes(http::Router& r, WebhookService& s) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  // Writes are refused from the head: a declared body over the cap, or (with an {id})
  // a webhook the caller may not change, is answered before a body byte is read.
  auto capped = [](http::Request& q) { return CheckDeclaredLength(q, kMaxWebhookBody); };
  const std::string base = "/api/settings/webhooks";
  const Requirement write = Requirement::WriteRole().Also(capped);
  const Requirement change =
      Requirement::WriteRole().Also([&s, capped](http::Request& q) -> Result<void> {
        HANGAR_TRY(capped(q));
        return s.CheckMayChange(q.principal, IdOf(q));
      });
  r.Add(Method::Get, base, ApiFamily::Hf, Requirement::SignedIn(),
        [&s](http::Request& q) { return List(s, q); });
  r.Add(Method::Post, base, ApiFamily::Hf, write, [&s](http::Request& q) { return Create(s, q); });
  r.Add(Method::Get, base + "/{id}", ApiFamily::Hf, Requirement::SignedIn(),
        [&s](http::Request& q) -> Result<http::Response> {
          HANGAR_ASSIGN_OR_RETURN(auto w, s.Get(q.principal, IdOf(q)));
          return One(w);
        });
  r.Add(Method::Post, base + "/{id}", ApiFamily::Hf, change,
        [&s](http::Request& q) { return Update(s, q); });
  r.Add(Method::Put, base + "/{id}", ApiFamily::Hf, change,
        [&s](http::Request& q) { return Update(s, q); });
  r.Add(Method::Delete, base + "/{id}", ApiFamily::Hf, change,
        [&s](http::Request& q) { return Delete(s, q); });
  r.Add(Method::Post, base + "/{id}/enable", ApiFamily::Hf, change,
        [&s](http::Request& q) { return SetDisabled(s, q, false); });
  r.Add(Method::Post, base + "/{id}/disable", ApiFamily::Hf, change,
        [&s](http::Request& q) { return SetDisabled(s, q, true); });
  r.Add(Method::Get, base + "/{id}/deliveries", ApiFamily::Hf, Requirement::SignedIn(),
        [&s](http::Request& q) { return Deliveries(s, q); });
}

}  // namespace hangar::api

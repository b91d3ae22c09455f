// The gateway's inference routes (proxy_routes.h): each request's route and body parsed
// here, passed on by one GatewayProxy::Forward call.

#include "api/gateway/proxy_routes.h"

#include "api/error_render.h"
#include "api/json_util.h"
#include "core/util.h"
#include "services/gateway/runtime_supervisor.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using http::Method;
using http::Request;
using http::Requirement;
using http::Response;
using services::GatewayProxy;
using services::ProxyCall;

// An inference request's body, at most (bytes): a long chat, or a batch of tensors.
constexpr size_t kMaxInferenceBody = 32 << 20;

ProxyCall CallOf(const Request& q, std::string protocol) {
  ProxyCall c;
  c.who = q.principal;
  c.protocol = std::move(protocol);
  c.method = q.method == Method::Post ? "POST" : "GET";
  c.path = q.path + (q.query.empty() ? "" : "?" + q.query);
  c.content_type = std::string(q.Header("content-type"));
  c.accept = std::string(q.Header("accept"));
  c.request_id = q.request_id;
  return c;
}

// The proxy's answer as a response, or its error in `api`'s shape (a refusal by the
// limits with its Retry-After).
Response Render(http::ApiFamily api, GatewayProxy& proxy, const ProxyCall& call, Request& q) {
  int64_t retry_after = 0;
  auto a = proxy.Forward(call, &retry_after);
  if (!a) {
    Response r = RenderError(api, a.error(), q);
    if (retry_after > 0) r.SetHeader("Retry-After", std::to_string(retry_after));
    return r;
  }
  Response r;
  r.status = a->status;
  for (auto& [name, value] : a->headers) r.AddHeader(name, std::move(value));
  if (a->stream) {
    r.content_length = a->stream->Size();
    r.stream = std::move(a->stream);
    r.stream_waits = true;  // each event is read as the backend sends it
    if (a->event_stream) r.SetHeader("X-Accel-Buffering", "no");
  } else {
    r.body = std::move(a->body);
  }
  return r;
}

// POST /v1/…: the route from the body's `model`.
Result<Response> OpenAi(GatewayProxy& proxy, Request& q) {
  ProxyCall call = CallOf(q, "openai");
  HANGAR_ASSIGN_OR_RETURN(call.body, q.ReadBody(kMaxInferenceBody));
  json::error_code ec;
  json::value v = json::parse(call.body, ec);
  if (ec || !v.is_object())
    return MakeError(ErrorCode::BadRequest, "the body must be a JSON object");
  const json::value* model = v.as_object().if_contains("model");
  if (!model || !model->is_string() || model->as_string().empty())
    return MakeError(ErrorCode::BadRequest,
                     "'model' is required: the name of a gateway route (GET /v1/models)");
  call.model = std::string(model->as_string());
  return Render(http::ApiFamily::OpenAi, proxy, call, q);
}

// /v2/models/{name}/…: the route from the path.
Result<Response> Oip(GatewayProxy& proxy, Request& q) {
  ProxyCall call = CallOf(q, "oip");
  bool ok = true;
  call.model = PercentDecode(q.Param("name"), &ok);
  if (!ok) return MakeError(ErrorCode::BadRequest, "the model name is not percent-encoded well");
  if (auto v = q.Param("version"); !v.empty()) {
    auto n = ParseUint64(v);
    if (!n || *n == 0 || *n > (uint64_t{1} << 53))
      return MakeError(ErrorCode::BadRequest,
                       "a version is a number from 1: '" + std::string(v.substr(0, 40)) + "'");
    call.version = static_cast<int64_t>(*n);
  }
  if (q.method == Method::Post) {
    HANGAR_ASSIGN_OR_RETURN(call.body, q.ReadBody(kMaxInferenceBody));
  }
  return Render(http::ApiFamily::Hf, proxy, call, q);
}

json::object Latency(const services::LatencyHistogram& h) {
  return json::object{{"count", h.Count()},
                      {"p50", h.Quantile(0.50)},
                      {"p95", h.Quantile(0.95)},
                      {"p99", h.Quantile(0.99)}};
}

Result<Response> Metrics(GatewayProxy& proxy, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto s, proxy.Stats(q.principal, std::string(q.Param("name"))));
  const services::RouteCounters& c = *s.counters;
  json::array backends;
  for (const auto& b : s.backends) {
    backends.push_back(json::object{{"url", b.url},
                                    {"ejected", b.ejected},
                                    {"failures_in_row", b.failures_in_row},
                                    {"ejected_until_ms", b.ejected_until_ms},
                                    {"ejections", b.ejections}});
  }
  json::object out{{"route", s.route.route.name},      {"requests", c.requests.load()},
                   {"errors", c.errors.load()},        {"retries", c.retries.load()},
                   {"limited", c.limited.load()},      {"tokens", c.tokens.load()},
                   {"latency_us", Latency(c.latency)}, {"upstream_us", Latency(c.upstream)}};
  json::array runtimes;
  for (const auto& r : s.runtimes) {
    runtimes.push_back(json::object{{"runtime", r.runtime},
                                    {"version", r.version},
                                    {"state", r.state},
                                    {"port", r.port},
                                    {"restarts", r.restarts},
                                    {"in_flight", r.in_flight},
                                    {"error", r.error},
                                    {"log", r.detail}});
  }
  if (q.principal.is_admin) {
    out["backends"] = std::move(backends);
    out["runtimes"] = std::move(runtimes);
  }
  return JsonResponse(out);
}

}  // namespace

void AddGatewayProxyRoutes(http::Router& router, GatewayProxy& proxy) {
  // The backend's answer may take the route's whole timeout: a thread of its own.
  const Requirement call = Requirement::SignedIn().Waits().Also(
      [](Request& q) { return CheckDeclaredLength(q, kMaxInferenceBody); });
  for (const char* path : {"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}) {
    router.Add(Method::Post, path, http::ApiFamily::OpenAi, call,
               [&proxy](Request& q) { return OpenAi(proxy, q); });
  }
  for (const char* path : {"/v2/health/live", "/v2/health/ready"}) {
    router.Add(Method::Get, path, http::ApiFamily::Hf, Requirement::Public(),
               [](Request&) -> Result<Response> { return JsonResponse(json::object{}); });
  }
  auto oip = [&proxy](Request& q) { return Oip(proxy, q); };
  for (const char* base : {"/v2/models/{name}", "/v2/models/{name}/versions/{version}"}) {
    std::string b = base;
    router.Add(Method::Get, b, http::ApiFamily::Hf, call, oip);
    router.Add(Method::Get, b + "/ready", http::ApiFamily::Hf, call, oip);
    router.Add(Method::Post, b + "/infer", http::ApiFamily::Hf, call, oip);
  }
  router.Add(Method::Get, "/api/v1/gateway/routes/{name}/metrics", http::ApiFamily::Hf,
             Requirement::Public(), [&proxy](Request& q) { return Metrics(proxy, q); });
}

}  // namespace hangar::api

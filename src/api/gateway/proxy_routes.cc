// The gateway's inference routes (proxy_routes.h): each request's route and body parsed
// here, passed on by one GatewayProxy::Forward call.

#include "api/gateway/proxy_routes.h"

#include "api/error_render.h"
#include "api/json_util.h"

#include <boost/json/basic_parser_impl.hpp>
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
  c.traceparent = q.trace.Header();
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

// Finds the top-level `model` string of a JSON object while checking the whole text is
// JSON, without building a tree (a 32 MiB body would take ~25 times that as one). The
// last `model` wins, as in a parsed object.
class ModelFinder {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return Open(true); }
  bool on_object_end(std::size_t, json::error_code&) { return Close(); }
  bool on_array_begin(json::error_code&) { return Open(false); }
  bool on_array_end(std::size_t, json::error_code&) { return Close(); }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) { return Key(s, false); }
  bool on_key(json::string_view s, std::size_t, json::error_code&) { return Key(s, true); }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    if (Wanted()) part_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    if (Wanted()) {
      part_.append(s.data(), s.size());
      model = std::move(part_);
      found = true;
    }
    part_.clear();
    return Value();
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(int64_t, json::string_view, json::error_code&) { return Value(); }
  bool on_uint64(uint64_t, json::string_view, json::error_code&) { return Value(); }
  bool on_double(double, json::string_view, json::error_code&) { return Value(); }
  bool on_bool(bool, json::error_code&) { return Value(); }
  bool on_null(json::error_code&) { return Value(); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

  bool top_is_object = false;
  bool found = false;  // a top-level `model` string was seen
  std::string model;

 private:
  bool Wanted() const { return depth_ == 1 && at_model_; }
  bool Open(bool object) {
    if (depth_ == 0) top_is_object = object;
    Value();
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  bool Key(json::string_view s, bool last) {
    if (depth_ != 1) return true;
    key_.append(s.data(), s.size());
    if (last) {
      at_model_ = key_ == "model";
      key_.clear();
    }
    return true;
  }
  bool Value() {
    if (depth_ == 1) at_model_ = false;  // a key's value ends here
    return true;
  }
  int depth_ = 0;
  bool at_model_ = false;
  std::string key_, part_;
};

// POST /v1/…: the route from the body's `model`.
Result<Response> OpenAi(GatewayProxy& proxy, Request& q) {
  ProxyCall call = CallOf(q, "openai");
  HANGAR_ASSIGN_OR_RETURN(call.body, q.ReadBody(kMaxInferenceBody));
  json::parse_options options;
  options.max_depth = 10000;  // no tree is built: depth costs nothing but a counter
  json::basic_parser<ModelFinder> parser(options);
  json::error_code ec;
  size_t used = parser.write_some(false, call.body.data(), call.body.size(), ec);
  if (!ec && used != call.body.size()) ec = json::error::extra_data;
  if (ec || !parser.handler().top_is_object)
    return MakeError(ErrorCode::BadRequest,
                     "the body must be a JSON object" + (ec ? ": " + ec.message() : ""));
  if (!parser.handler().found || parser.handler().model.empty())
    return MakeError(ErrorCode::BadRequest,
                     "'model' is required: the name of a gateway route (GET /v1/models)");
  call.model = std::move(parser.handler().model);
  return Render(http::ApiFamily::OpenAi, proxy, call, q);
}

// /v2/models/{name}/…: the route from the path.
Result<Response> Oip(GatewayProxy& proxy, Request& q) {
  ProxyCall call = CallOf(q, "oip");
  call.path = q.path.ends_with("/infer") ? "/infer" : q.path.ends_with("/ready") ? "/ready" : "";
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

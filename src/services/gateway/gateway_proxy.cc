#include "services/gateway/gateway_proxy.h"

#include <chrono>

#include <boost/json.hpp>

#include "core/log.h"
#include "core/util.h"
#include "net/http_client.h"
#include "services/gateway/runtime_supervisor.h"
#include "services/gateway/upstream_body.h"

namespace hangar::services {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MicrosSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

// A backend's answer headers the client gets: its content negotiation and the OpenAI
// servers' informative ones; never hop-by-hop or framing headers (http/ frames anew).
bool PassedOn(std::string_view name) {
  return name == "content-type" || name == "cache-control" || name == "retry-after" ||
         name.starts_with("x-ratelimit-") || name == "openai-processing-ms" ||
         name == "openai-model" || name == "openai-version";
}

std::string BaseUrl(const std::string& url) {
  std::string out = url;
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

// The URL a health check of `protocol`'s backend at `url` gets: vLLM, TGI and llama.cpp
// answer /health; KServe and Triton answer OIP's /v2/health/ready.
std::string HealthUrl(const std::string& protocol, const std::string& url) {
  return BaseUrl(url) + (protocol == "oip" ? "/v2/health/ready" : "/health");
}

// The request `call` makes to the backend at `url` serving `version` of `route`.
net::HttpRequest UpstreamRequest(const ProxyCall& call, const db::RouteRecord& route,
                                 const db::VersionRecord& version, const std::string& url) {
  net::HttpRequest req;
  req.method = call.method;
  req.url = BaseUrl(url);
  if (call.protocol == "oip") {
    req.url += "/v2/models/" + route.name;
    if (call.version > 0) req.url += "/versions/" + std::to_string(call.version);
  }
  req.url += call.path;
  if (!call.content_type.empty()) req.headers.emplace_back("Content-Type", call.content_type);
  if (!call.accept.empty()) req.headers.emplace_back("Accept", call.accept);
  req.headers.emplace_back("X-Request-Id", call.request_id);
  if (!call.traceparent.empty()) req.headers.emplace_back("traceparent", call.traceparent);
  // What the backend serves, for its logs (and a supervised runtime's check). The
  // caller's hub token is never passed on.
  req.headers.emplace_back("X-Hangar-Route", route.name);
  req.headers.emplace_back("X-Hangar-Model", route.model);
  req.headers.emplace_back("X-Hangar-Model-Version", std::to_string(version.version));
  req.headers.emplace_back("X-Hangar-Commit", version.commit);
  if (call.method == "POST") req.body_bytes = call.body;
  req.stall_timeout = std::chrono::milliseconds(route.timeout_ms);
  return req;
}

// `message` with the backend's URL replaced for all but site admins: backends are hosts of
// the infrastructure (docs/gateway.md §Who may do what).
std::string Redacted(std::string message, const std::string& url, const Principal& who) {
  if (who.is_admin) return message;
  std::string base = BaseUrl(url);
  for (size_t at = message.find(base); at != std::string::npos; at = message.find(base, at)) {
    message.replace(at, base.size(), "<backend>");
  }
  return message;
}

// Whether a header value may go on as it is: no control bytes (a bare CR splits headers
// for some clients), no bytes past ASCII.
bool HeaderSafe(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u < 0x7f);
  });
}

bool IsJson(std::string_view text) {
  boost::json::error_code ec;
  boost::json::parse(text, ec);
  return !ec;
}

}  // namespace

// A route as a request resolved it: the route and the version it serves now.
struct GatewayProxy::Target {
  RouteView view;
  std::string alias;      // the alias followed ("" for a pinned version)
  std::string limit_key;  // whose per-token limits a request counts to (set per request)
};

struct GatewayProxy::CachedTarget {
  uint64_t generation = 0;
  Target target;
};

// How the attempts at one route went, for the answer when all fail.
struct GatewayProxy::Attempted {
  std::optional<ProxyAnswer> last_answer;  // the last 5xx/429 a backend gave
  std::optional<Error> last_error;         // the last transport failure
};

GatewayProxy::GatewayProxy(GatewayService& routes, RegistryService& registry, ProxyOptions options)
    : routes_(routes),
      registry_(registry),
      options_(std::move(options)),
      balancer_(options_.now_millis ? options_.now_millis : NowUnixMillis),
      limits_(options_.now_millis ? options_.now_millis : NowUnixMillis),
      targets_(4096, 1000) {
  if (!options_.now_millis) options_.now_millis = NowUnixMillis;
}

GatewayProxy::~GatewayProxy() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (health_.joinable()) health_.join();
}

Result<GatewayProxy::Target> GatewayProxy::Lookup(const Principal& who, const std::string& model) {
  // Kept per caller (what a caller may see is theirs) for 1 s, and only while nothing in
  // the registry changed: an alias move reaches the next request.
  std::string key = std::to_string(who.user_id) + (who.is_admin ? "!" : ":") + model;
  uint64_t generation = routes_.Generation();
  if (auto hit = targets_.Get(key, Now()); hit && (*hit)->generation == generation) {
    return (*hit)->target;
  }
  size_t at = model.find('@');
  std::string name = model.substr(0, at);
  Target t;
  HANGAR_ASSIGN_OR_RETURN(t.view, routes_.GetRoute(who, name));
  t.alias = t.view.route.target_alias;
  if (at != std::string::npos) {
    t.alias = model.substr(at + 1);
    if (t.alias.size() > 128)  // no alias is this long; the message must not echo it whole
      return MakeError(ErrorCode::NotFound, "no alias '" + t.alias.substr(0, 64) + "…' of route '" +
                                                name.substr(0, 128) + "'");
    // `name@v3` names version 3 (aliases of that form are reserved for it).
    auto number =
        t.alias.size() > 1 && t.alias[0] == 'v' ? ParseUint64(t.alias.substr(1)) : std::nullopt;
    auto v = number && *number <= static_cast<uint64_t>(INT64_MAX)
                 ? registry_.GetVersion(who, t.view.route.model, static_cast<int64_t>(*number))
                 : registry_.VersionByAlias(who, t.view.route.model, t.alias);
    if (!v) return std::move(v).error();
    t.view.version = std::move(*v);
    t.view.problem.clear();
  }
  auto cached = std::make_shared<CachedTarget>(CachedTarget{generation, t});
  targets_.Put(key, std::move(cached), Now());
  return t;
}

Result<ProxyAnswer> GatewayProxy::Forward(const ProxyCall& call, int64_t* retry_after) {
  auto start = Clock::now();
  HANGAR_ASSIGN_OR_RETURN(Target t, Lookup(call.who, call.model));
  RouteCounters& counters = metrics_.For(t.view.route.name, t.view.route.id);
  counters.requests.fetch_add(1, std::memory_order_relaxed);
  auto answer = Serve(call, t, counters, retry_after);
  // Every answer after the route is known counts; a stream counts itself when it ends.
  if (!answer || !answer->stream) {
    counters.latency.Add(MicrosSince(start));
    int status = answer ? answer->status : Describe(answer.error().code).http_status;
    if (status >= 500) counters.errors.fetch_add(1, std::memory_order_relaxed);
  }
  return answer;
}

Result<ProxyAnswer> GatewayProxy::Serve(const ProxyCall& call, Target& t, RouteCounters& counters,
                                        int64_t* retry_after) {
  const db::RouteRecord& route = t.view.route;
  if (route.protocol != call.protocol) {
    return MakeError(ErrorCode::NotFound, "route '" + route.name + "' speaks " + route.protocol +
                                              ", not " + call.protocol);
  }
  if (call.version > 0) {  // OIP's /versions/{v}: that version of the route's model
    HANGAR_ASSIGN_OR_RETURN(t.view.version,
                            registry_.GetVersion(call.who, route.model, call.version));
    t.view.problem.clear();
  }
  if (!t.view.version) {
    return MakeError(ErrorCode::Unavailable,
                     "route '" + route.name + "' serves nothing now: " + t.view.problem);
  }
  t.limit_key = (call.who.token_id ? "t" + std::to_string(call.who.token_id)
                                   : "u" + std::to_string(call.who.user_id)) +
                "/" + route.name;
  if (auto wait = limits_.Admit(t.limit_key, route.requests_per_minute, route.tokens_per_minute)) {
    counters.limited.fetch_add(1, std::memory_order_relaxed);
    if (retry_after) *retry_after = *wait;
    return MakeError(ErrorCode::TooManyRequests,
                     "route '" + route.name + "' allows " +
                         std::to_string(route.requests_per_minute) + " requests and " +
                         std::to_string(route.tokens_per_minute) +
                         " tokens per minute per token (0: no limit); try again in " +
                         std::to_string(*wait) + " s");
  }
  auto answer = ForwardTo(call, t, counters, 0);
  if (answer && !answer->stream && answer->status < 300) {
    int64_t tokens = TotalTokensIn(answer->body);
    counters.tokens.fetch_add(tokens, std::memory_order_relaxed);
    limits_.Charge(t.limit_key, route.tokens_per_minute, tokens);
  }
  return answer;
}

Result<ProxyAnswer> GatewayProxy::ForwardTo(const ProxyCall& call, const Target& t,
                                            RouteCounters& counters, int depth) {
  const db::RouteRecord& route = t.view.route;
  Attempted tried;
  auto order = balancer_.Order(route.backends);
  // Retries go to the other backends first, then round again (a route of one backend
  // retries that one).
  size_t attempts = static_cast<size_t>(route.retries) + 1;
  for (size_t i = 0; i < attempts; ++i) {
    if (i > 0) counters.retries.fetch_add(1, std::memory_order_relaxed);
    const db::BackendRecord& b = *order[i % order.size()];
    std::string url = b.target;
    std::shared_ptr<void> hold;  // a runtime is not stopped while its request runs
    if (b.kind == "runtime") {
      auto lease = options_.runtimes
                       ? options_.runtimes->Acquire(b.target, route.model, *t.view.version,
                                                    std::chrono::milliseconds(route.timeout_ms),
                                                    call.who.is_admin)
                       : Result<RuntimeSupervisor::Lease>(
                             MakeError(ErrorCode::Unavailable, "no runtimes are configured"));
      if (!lease) {
        tried.last_error = lease.error();
        // One that was not ready in the whole timeout is not waited for again.
        if (lease.error().code == ErrorCode::GatewayTimeout) break;
        continue;
      }
      url = lease->url;
      hold = lease->hold;
    }
    auto answer = Attempt(call, t, url, std::move(hold), counters, tried);
    if (answer) return answer;
  }
  // Every backend tried failed: the fallback route next (one level), else the last answer.
  if (!route.fallback.empty() && depth == 0) {
    auto fallback = Lookup(call.who, route.fallback);
    if (fallback && fallback->view.version && fallback->view.route.protocol == route.protocol) {
      Log("gateway")->warn("[req {}] route {} failed; falling back to {}", call.request_id,
                           route.name, route.fallback);
      fallback->limit_key = t.limit_key;
      auto answer = ForwardTo(call, *fallback, counters, depth + 1);
      if (answer && answer->status < 500) return answer;
    }
  }
  if (tried.last_answer) return std::move(*tried.last_answer);
  Error e = tried.last_error.value_or(MakeError(ErrorCode::BadGateway, "no backend"));
  // A runtime that is not running (Unavailable) or not ready in time keeps its code.
  bool kept = e.code == ErrorCode::GatewayTimeout || e.code == ErrorCode::Unavailable;
  ErrorCode code = kept ? e.code : ErrorCode::BadGateway;
  return MakeError(code, "no backend of route '" + route.name + "' answered (" +
                             std::to_string(attempts) + " tried): " + e.message);
}

// One try at `url`. A value only for an answer the client should get; a failure to try
// elsewhere is recorded in `out` and returned as an error.
Result<ProxyAnswer> GatewayProxy::Attempt(const ProxyCall& call, const Target& t,
                                          const std::string& url, std::shared_ptr<void> hold,
                                          RouteCounters& counters, Attempted& out) {
  const db::RouteRecord& route = t.view.route;
  auto start = Clock::now();
  // A failure to try elsewhere: the backend counted as failed, the error kept for the
  // answer when all fail, its URL left out for all but site admins.
  auto failed = [&](const Error& e) -> Error {
    balancer_.Failed(url);
    ErrorCode code = e.code == ErrorCode::GatewayTimeout ? e.code : ErrorCode::BadGateway;
    out.last_error = MakeError(code, Redacted(e.message, url, call.who));
    return *out.last_error;
  };
  auto up = net::HttpStream::Open(UpstreamRequest(call, route, *t.view.version, url));
  if (!up) return failed(up.error());
  counters.upstream.Add(MicrosSince(start));
  ProxyAnswer a;
  a.status = static_cast<int>((*up)->Status());
  if (a.status < 200 || a.status > 599)  // a 101 or a made-up status is no answer
    return failed(MakeError(ErrorCode::BadGateway,
                            "the backend answered status " + std::to_string(a.status)));
  // (A pair, not a structured binding: clang 14 cannot capture one in a lambda.)
  for (const auto& header : (*up)->Head().headers) {
    const std::string& name = header.first;
    bool seen = std::any_of(a.headers.begin(), a.headers.end(),
                            [&name](const auto& h) { return h.first == name; });
    if (PassedOn(name) && HeaderSafe(header.second) && !seen) a.headers.push_back(header);
  }

  std::string type = AsciiLower((*up)->Head().Header("content-type").value_or(""));
  bool retryable = a.status >= 500 || a.status == 429;
  a.event_stream = !retryable && type.starts_with("text/event-stream");
  auto on_end = [this, url, &counters, key = t.limit_key, tpm = route.tokens_per_minute](
                    bool ok, int64_t tokens) {
    if (!ok) return balancer_.Failed(url);
    balancer_.Succeeded(url);
    counters.tokens.fetch_add(tokens, std::memory_order_relaxed);
    limits_.Charge(key, tpm, tokens);
  };
  if (a.event_stream) {
    a.stream = std::make_unique<UpstreamBody>(std::move(*up), "", true, counters, start,
                                              Clock::time_point::max(), on_end, std::move(hold));
    return a;
  }
  // Anything else is read whole before the client sees a byte, so a backend that breaks
  // off midway is retried; past max_buffered_answer the rest is passed through instead.
  // The whole answer must come within the route's timeout (a never-ending body is cut).
  std::string body;
  std::vector<char> buf(64 << 10);
  auto deadline = start + std::chrono::milliseconds(route.timeout_ms);
  for (;;) {
    if (Clock::now() >= deadline) {
      return failed(MakeError(ErrorCode::GatewayTimeout,
                              "the answer did not end within the route's timeout_ms (" +
                                  std::to_string(route.timeout_ms) + ")"));
    }
    auto n = (*up)->Read(buf);
    if (!n) return failed(n.error());
    if (*n == 0) break;
    body.append(buf.data(), *n);
    if (body.size() > options_.max_buffered_answer && !retryable) {
      a.stream = std::make_unique<UpstreamBody>(std::move(*up), std::move(body), false, counters,
                                                start, deadline, on_end, std::move(hold));
      return a;
    }
    if (body.size() > (64 << 10) && retryable) break;  // an error page: enough of it
  }
  a.body = std::move(body);
  if (retryable) {
    int status = a.status;
    if (status >= 500) balancer_.Failed(url);
    out.last_answer = std::move(a);
    return MakeError(ErrorCode::BadGateway, "backend answered " + std::to_string(status));
  }
  // A JSON answer the client cannot parse is the backend's failure, not an answer.
  if (type.starts_with("application/json") && a.status < 300 && !IsJson(a.body))
    return failed(MakeError(ErrorCode::BadGateway, "the backend answered malformed JSON"));
  balancer_.Succeeded(url);
  return a;
}

Result<RouteStats> GatewayProxy::Stats(const Principal& who, const std::string& name) {
  RouteStats s;
  HANGAR_ASSIGN_OR_RETURN(s.route, routes_.GetRoute(who, name));
  s.counters = &metrics_.For(name, s.route.route.id);
  if (!who.is_admin) return s;
  std::vector<db::BackendRecord> urls;
  for (const auto& b : s.route.route.backends) {
    if (b.kind == "url") urls.push_back(b);
  }
  s.backends = balancer_.Health(urls);
  if (options_.runtimes) {
    for (auto& r : options_.runtimes->States()) {
      if (r.model == s.route.route.model) s.runtimes.push_back(std::move(r));
    }
  }
  return s;
}

void GatewayProxy::StartHealthChecks() {
  if (options_.health_interval_ms <= 0 || health_.joinable()) return;
  health_ = std::thread([this] { HealthLoop(); });
}

void GatewayProxy::RetainRuntimes() {
  if (!options_.runtimes) return;
  auto routes = routes_.AllRoutes();
  if (!routes) {
    Log("gateway")->warn("runtimes: {}", routes.error().message);
    return;
  }
  std::vector<RuntimeSupervisor::Want> wanted;
  for (const auto& v : *routes) {
    if (!v.version) continue;
    for (const auto& b : v.route.backends) {
      if (b.kind == "runtime") wanted.push_back({b.target, v.route.model, *v.version});
    }
  }
  options_.runtimes->Retain(wanted);
}

void GatewayProxy::HealthLoop() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(options_.health_interval_ms),
                     [this] { return stop_; });
      if (stop_) return;
    }
    RetainRuntimes();
    auto backends = routes_.AllBackends();
    if (!backends) {
      Log("gateway")->warn("health checks: {}", backends.error().message);
      continue;
    }
    // Probed kProbesAtOnce at a time, each bounded by 1 s: backends that hang slow the
    // round by a second per batch, not per backend.
    const auto& all = *backends;
    for (size_t from = 0; from < all.size(); from += kProbesAtOnce) {
      std::vector<std::thread> probes;
      for (size_t i = from; i < std::min(all.size(), from + kProbesAtOnce); ++i) {
        probes.emplace_back([this, &all, i] { Probe(all[i].first, all[i].second); });
      }
      for (auto& t : probes) t.join();
    }
  }
}

void GatewayProxy::Probe(const std::string& protocol, const std::string& url) {
  thread_local net::HttpClient client;
  net::HttpRequest req;
  req.url = HealthUrl(protocol, url);
  req.timeout = std::chrono::milliseconds(1000);
  auto r = client.Perform(req);
  if (r && r->status >= 200 && r->status < 300) {
    balancer_.Recovered(url);
  } else {
    balancer_.Failed(url);
  }
}

}  // namespace hangar::services

#pragma once
// GatewayProxy: the gateway itself (issue 16, docs/gateway.md §Serving requests). An
// inference request names a route in its `model` (OpenAI) or its path (OIP); the proxy
// checks the caller may see the route's model and is within the route's per-token limits,
// then sends the request as it came to one of the route's backends (Balancer), retrying on
// another when a backend refuses the connection, answers 5xx or 429, times out, or breaks
// off before the answer reached the client, and then on the route's fallback. An event
// stream (`text/event-stream`) is passed through as it arrives; a backend that breaks off
// mid-stream ends it with an error event. Active health checks probe every backend.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/byte_source.h"
#include "core/principal.h"
#include "core/result.h"
#include "core/ttl_cache.h"
#include "services/gateway/balancer.h"
#include "services/gateway/gateway_service.h"
#include "services/gateway/route_metrics.h"
#include "services/gateway/token_limits.h"

namespace hangar::services {

// One inference request, as the client sent it.
struct ProxyCall {
  Principal who;
  std::string model;     // a route name, or `name@alias` to follow another alias of its model
  std::string protocol;  // the face it came in on: "openai" or "oip"
  std::string method;    // "GET" or "POST"
  // Sent to the backend after its base URL: "/v1/chat/completions". For OIP, only what
  // follows the model ("", "/ready", "/infer"): the backend gets the canonical
  // /v2/models/<route>[/versions/<version>]<path>, whatever form the client used.
  std::string path;
  std::string body;  // sent as is
  std::string content_type;
  std::string accept;
  std::string request_id;
  // The W3C traceparent the backend gets: the hub's span of this request as its parent.
  std::string traceparent;
  int64_t version = 0;  // OIP's /versions/{v}: serve that version; 0 = the route's
};

// What the client gets: a whole body, or a stream passed through (`stream` set).
struct ProxyAnswer {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // the backend's, filtered
  std::string body;
  std::unique_ptr<ByteSource> stream;  // an event stream or a large body, unbuffered
  bool event_stream = false;
};

// A route's counters and its backends' health, for the metrics call.
struct RuntimeState;

struct RouteStats {
  RouteView route;
  const RouteCounters* counters = nullptr;
  std::vector<BackendHealth> backends;  // the url backends (site admins only)
  std::vector<RuntimeState> runtimes;   // the runtimes of its model (site admins only)
};

class RuntimeSupervisor;

struct ProxyOptions {
  RuntimeSupervisor* runtimes = nullptr;  // serves backends of kind "runtime"; may be null
  std::function<int64_t()> now_millis;    // NowUnixMillis by default
  int64_t health_interval_ms = 2000;      // active health checks; 0: none
  size_t max_buffered_answer = 8 << 20;   // a larger non-stream answer is streamed, not retried
};

// Thread-safe; one per process. Errors of Forward: NotFound (no such route, or one `who`
// may not see, or of the other protocol), Unavailable (the route names no version now),
// TooManyRequests (its limits; the message gives the wait, Retry-After in `retry_after`),
// BadGateway / GatewayTimeout (every backend failed, or timed out).
class GatewayProxy {
 public:
  GatewayProxy(GatewayService& routes, RegistryService& registry, ProxyOptions options = {});
  ~GatewayProxy();  // stops the health checks

  // Starts the health-check thread (options.health_interval_ms).
  void StartHealthChecks();
  // Forwards `call`; `retry_after` gets the seconds to wait on TooManyRequests.
  Result<ProxyAnswer> Forward(const ProxyCall& call, int64_t* retry_after = nullptr);
  // The route `name`'s counters; backends' URLs and health to site admins only.
  Result<RouteStats> Stats(const Principal& who, const std::string& name);

 private:
  struct Target;
  struct Attempted;
  Result<Target> Lookup(const Principal& who, const std::string& model);
  // Forward's rules once the route is known: protocol, version, limits, then ForwardTo.
  Result<ProxyAnswer> Serve(const ProxyCall& call, Target& t, RouteCounters& counters,
                            int64_t* retry_after);
  Result<ProxyAnswer> ForwardTo(const ProxyCall& call, const Target& t, RouteCounters& counters,
                                int depth);
  Result<ProxyAnswer> Attempt(const ProxyCall& call, const Target& t, const std::string& url,
                              std::shared_ptr<void> hold, RouteCounters& counters, Attempted& out);
  void RetainRuntimes();  // what the routes name now, kept running
  static constexpr size_t kProbesAtOnce = 16;
  void HealthLoop();
  void Probe(const std::string& protocol, const std::string& url);  // one health check
  int64_t Now() const { return options_.now_millis(); }

  GatewayService& routes_;
  RegistryService& registry_;
  ProxyOptions options_;
  Balancer balancer_;
  TokenLimits limits_;
  GatewayMetrics metrics_;
  struct CachedTarget;
  TtlCache<std::shared_ptr<const CachedTarget>> targets_;  // by caller and model, 1 s
  std::mutex mu_;                                          // guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread health_;
};

}  // namespace hangar::services

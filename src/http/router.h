#pragma once
// Router: a table of routes (method + path pattern → handler), like cgit's cmd.c.
// Matches on the raw, still percent-encoded path (hf-api.md §1.4 rule 1), authenticates,
// runs the handler and renders errors in the route's API family.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::http {

// Which protocol's error shape a route speaks (STYLE.md §3).
enum class ApiFamily { Hf, Git, Lfs, Oci, Html, Plain };

// A handler: blocking; runs on the worker pool, never on an I/O thread.
using Handler = std::function<Result<Response>(Request&)>;

// Pattern syntax: segments separated by '/'. A literal segment matches itself; `{name}`
// matches one non-empty segment; a final `{name*}` matches the rest of the path (possibly
// empty, '/'s included). Parameters keep their raw, percent-encoded text.
struct Route {
  Method method;
  std::string pattern;
  ApiFamily api;
  Handler handler;
  // False for routes that authorise by something in the request itself (a signed ticket):
  // their Authorization header is not looked at and the principal stays anonymous.
  bool authenticate = true;
};

// Turns a request's Authorization into a Principal; errors (Unauthorized) are rendered
// in the route's family and the handler is not run.
using Authenticator = std::function<Result<Principal>(const Request&)>;
// Renders `err` for `req` in family `api` (api/error_render.cc).
using ErrorRenderer = std::function<Response(ApiFamily, const Error&, const Request&)>;

// Build once at start-up, then read-only: Dispatch is thread-safe.
class Router {
 public:
  // Adds a route; earlier routes win when several match.
  void Add(Method method, std::string pattern, ApiFamily api, Handler handler,
           bool authenticate = true);
  void SetAuthenticator(Authenticator a) { authenticate_ = std::move(a); }
  void SetErrorRenderer(ErrorRenderer r) { render_ = std::move(r); }

  // The outcome of the head alone: either the route whose handler may run (req.params and
  // req.principal set), or the answer to send without running it.
  struct Admission {
    const Route* route = nullptr;     // set when the handler may run
    // Set when answered without the handler (404/405/401/403/preflight).
    std::optional<Response> answer;
  };
  // Matches and authenticates from the head alone; never reads the body. An answer carries
  // X-Request-Id and CORS headers already.
  Admission Admit(Request& req) const;
  // Runs the admitted route's handler (a.route must be set); always returns a response
  // (errors rendered, a leaked exception becomes Internal). Sets X-Request-Id and CORS.
  Response Run(const Admission& a, Request& req) const;
  // Admit, then Run when admitted.
  Response Dispatch(Request& req) const;

  // Renders `err` for `req` as a response in family `api` (used by the server for
  // protocol-level failures such as oversized headers).
  Response Render(ApiFamily api, const Error& err, const Request& req) const;

 private:
  struct Compiled {
    Route route;
    std::vector<std::string> segments;  // literal text, "{x}" or "{x*}"
  };
  // The route for `path` and `method`, or null; `path_matched` tells a 405 from a 404.
  const Compiled* Match(Method method, std::string_view path, Request& req,
                        bool& path_matched) const;

  // Sets X-Request-Id and the CORS headers on `res`.
  void Decorate(Response& res, const Request& req) const;

  std::vector<Compiled> routes_;
  Authenticator authenticate_;
  ErrorRenderer render_;
};

}  // namespace hangar::http

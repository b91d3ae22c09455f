#include "http/router.h"

#include <algorithm>

#include <cstdlib>
#include <exception>

#include "core/log.h"
#include "core/util.h"

namespace hangar::http {

namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool IsParam(std::string_view seg) {
  return seg.size() >= 2 && seg.front() == '{' && seg.back() == '}';
}
bool IsRest(std::string_view seg) { return IsParam(seg) && seg[seg.size() - 2] == '*'; }
std::string ParamName(std::string_view seg) {
  bool rest = IsRest(seg);
  seg.remove_prefix(1);
  seg.remove_suffix(rest ? 2 : 1);
  return std::string(seg);
}

// Tries `segs` (of the pattern) against `path`; on success fills `params`.
bool MatchSegments(const std::vector<std::string>& segs, std::string_view path,
                   std::vector<std::pair<std::string, std::string>>& params) {
  std::string_view rest = path;
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  params.clear();
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    if (IsRest(seg)) {
      params.emplace_back(ParamName(seg), std::string(rest));
      return true;
    }
    size_t end = rest.find('/');
    bool last_in_path = end == std::string_view::npos;
    std::string_view piece = last_in_path ? rest : rest.substr(0, end);
    if (IsParam(seg)) {
      if (piece.empty()) return false;
      params.emplace_back(ParamName(seg), std::string(piece));
    } else if (piece != seg) {
      return false;
    }
    bool last_in_pattern = i + 1 == segs.size();
    if (last_in_pattern) return last_in_path;
    if (last_in_path) {
      // The path ended; only a trailing rest-parameter may still match (empty).
      if (i + 2 == segs.size() && IsRest(segs[i + 1])) {
        params.emplace_back(ParamName(segs[i + 1]), "");
        return true;
      }
      return false;
    }
    rest.remove_prefix(end + 1);
  }
  return false;
}

constexpr const char* kExposeHeaders =
    "X-Error-Code, X-Error-Message, X-Request-Id, X-Repo-Commit, X-Linked-Etag, "
    "X-Linked-Size, ETag, Link, X-Total-Count, Content-Range, Accept-Ranges, Content-Length";

}  // namespace

namespace {

std::string GateName(const Requirement& need) {
  switch (need.gate) {
    case Gate::Public:
      return "public";
    case Gate::SignedIn:
      return "signed-in";
    case Gate::Session:
      return "session";
    case Gate::WriteRole:
      return "write-role";
    case Gate::Ticket:
      return "ticket";
    case Gate::Registry:
      return "registry";
    case Gate::Repo:
      break;
  }
  std::string name = need.access == Access::Admin   ? "repo:admin"
                     : need.access == Access::Write ? "repo:write"
                                                    : "repo:read";
  if (need.challenge) name += ":challenge";
  return need.own ? name + ":or-ticket" : name;
}

}  // namespace

Result<void> CheckWriteRole(const Principal& who) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to do this");
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden,
                     "token '" + who.token_name + "' is read-only; this needs a write token");
  }
  return {};
}

std::string RequirementName(const Requirement& need) {
  return need.also ? GateName(need) + "+check" : GateName(need);
}

void Router::Add(Method method, std::string pattern, ApiFamily api, Requirement need,
                 Handler handler) {
  std::vector<std::string> segments;
  for (auto seg : SplitPath(pattern)) segments.emplace_back(seg);
  if ((need.gate == Gate::Ticket || need.gate == Gate::Registry) && !need.own) {
    Log("http")->critical("route {} checks a credential of its own but declares no check", pattern);
    std::abort();
  }
  if (need.gate == Gate::Repo) {
    bool ns = false, name = false;
    for (const auto& seg : segments) {
      ns = ns || seg == "{ns}";
      name = name || seg == "{name}";
    }
    if (!ns || !name) {
      // A programming error in a route table, found at start-up by every test.
      Log("http")->critical("route {} needs a repo but has no {{ns}}/{{name}}", pattern);
      std::abort();
    }
  }
  routes_.push_back(Route{method, std::move(pattern), api, need, std::move(handler)});
  segments_.push_back(std::move(segments));
}

const Route* Router::Match(Method method, std::string_view path,
                           std::vector<std::pair<std::string, std::string>>& params,
                           bool& path_matched) const {
  path_matched = false;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (!MatchSegments(segments_[i], path, params)) continue;
    path_matched = true;
    const Route& r = routes_[i];
    bool method_ok = r.method == method || (method == Method::Head && r.method == Method::Get);
    if (method_ok) return &r;
  }
  params.clear();
  return nullptr;
}

std::string Router::AllowedMethods(std::string_view path) const {
  std::vector<std::string_view> names;
  auto add = [&](std::string_view m) {
    if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(m);
  };
  std::vector<std::pair<std::string, std::string>> params;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (!MatchSegments(segments_[i], path, params)) continue;
    add(MethodName(routes_[i].method));
    if (routes_[i].method == Method::Get) add("HEAD");
  }
  add("OPTIONS");  // the CORS preflight answers on every known path
  std::string out;
  for (std::string_view m : names) out += (out.empty() ? "" : ", ") + std::string(m);
  return out;
}

const Route* Router::Find(Method method, std::string_view path) const {
  std::vector<std::pair<std::string, std::string>> params;
  bool path_matched = false;
  return Match(method, path, params, path_matched);
}

Response Router::Render(ApiFamily api, const Error& err, const Request& req) const {
  if (render_) return render_(api, err, req);
  return Response::Text(Describe(err.code).http_status, err.message + "\n");
}

Result<void> Router::Authorize(const Route& route, const Request& req) const {
  const Requirement& need = route.need;
  const Principal& who = req.principal;
  switch (need.gate) {
    case Gate::Public:
    case Gate::Ticket:
    case Gate::Registry:
      return {};
    case Gate::SignedIn:
    case Gate::Session:
    case Gate::WriteRole:
      if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to do this");
      if (need.gate == Gate::Session && !who.session) {
        return MakeError(ErrorCode::Forbidden,
                         "this needs a signed-in browser session; access tokens cannot be "
                         "used for account settings");
      }
      if (need.gate == Gate::WriteRole) return CheckWriteRole(who);
      return {};
    case Gate::Repo:
      break;
  }
  bool ok = true;
  std::string ns = PercentDecode(req.Param("ns"), &ok);
  std::string name = PercentDecode(req.Param("name"), &ok);
  if (!ok) return MakeError(ErrorCode::BadRequest, "malformed URL: invalid escape in a repo id");
  constexpr std::string_view kGit = ".git";
  if (need.git_suffix && name.size() > kGit.size() && name.ends_with(kGit)) {
    name.resize(name.size() - kGit.size());
  }
  if (!authorize_repo_) return MakeError(ErrorCode::Internal, "no repo authorizer configured");
  Result<void> allowed = authorize_repo_(who, need.repo_type, ns, name, need.access);
  if (!allowed && need.challenge && who.anonymous &&
      allowed.error().code == ErrorCode::RepoNotFound) {
    std::string prefix(RepoUrlPrefix(need.repo_type));
    return MakeError(ErrorCode::Unauthorized,
                     "authentication required for " + prefix + ns + "/" + name);
  }
  return allowed;
}

void Router::Finish(const Request& req, Response& res) const {
  res.SetHeader("X-Request-Id", req.request_id);
  if (!req.Header("origin").empty()) {
    res.SetHeader("Access-Control-Allow-Origin", "*");
    res.SetHeader("Access-Control-Expose-Headers", kExposeHeaders);
  }
}

Admission Router::Admit(Request& req) const {
  Admission a;
  bool path_matched = false;
  const Route* route = Match(req.method, req.path, req.params, path_matched);
  req.route_index = route ? static_cast<int>(route - routes_.data()) : -1;
  ApiFamily api = route ? route->api : ApiFamily::Plain;
  if (req.method == Method::Options && path_matched) {
    // CORS preflight (hf-api.md §1.14): browsers send it without credentials.
    Response res;
    res.status = 204;
    res.SetHeader("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    res.SetHeader("Access-Control-Allow-Headers", "Authorization, Range, Content-Type");
    res.SetHeader("Access-Control-Max-Age", "86400");
    a.answer = std::move(res);
  } else if (!route && path_matched) {
    const std::string allow = AllowedMethods(req.path);
    a.answer = Render(api,
                      MakeError(ErrorCode::MethodNotAllowed,
                                "method " + req.method_name + " not allowed here (" + allow + ")"),
                      req);
    a.answer->SetHeader("Allow", allow);  // RFC 9110 §15.5.6
  } else if (!route) {
    a.answer = Render(api, MakeError(ErrorCode::NotFound, "no such endpoint: " + req.path), req);
  } else {
    try {
      Result<void> admitted;
      bool own_credential = route->need.gate == Gate::Ticket || route->need.gate == Gate::Registry;
      req.principal = Principal::Anonymous();
      if (authenticate_ && !own_credential) {
        Result<Principal> who = authenticate_(req, *route);
        if (!who) {
          admitted = std::move(who).error();
        } else if (who->repo_scope != 0 && api != ApiFamily::Git && api != ApiFamily::Lfs) {
          // A credential bound to one repo (an SSH deploy key's, git-lfs-authenticate's)
          // opens its repo's git and LFS routes only; RepoService::Open checks the repo.
          admitted = MakeError(ErrorCode::Forbidden,
                               "this credential is valid only for git and LFS on one repo");
        } else {
          req.principal = std::move(*who);
        }
      }
      // A route's own credential: a ticket-bearing RepoOrTicket request, Ticket, Registry.
      const OwnCheck* own = nullptr;
      if (own_credential || (route->need.own && req.Query("ticket"))) own = &route->need.own;
      if (admitted && own) {
        if (auto refused = (*own)(req)) a.answer = std::move(*refused);
      } else if (admitted) {
        admitted = Authorize(*route, req);
      }
      if (admitted && !a.answer && route->need.also) admitted = route->need.also(req);
      if (a.answer) {
        // Refused by the route's own check, rendered by it.
      } else if (admitted) {
        a.route = route;
      } else {
        if (admitted.error().code == ErrorCode::Internal) {
          Log("http")->error("[req {}] {} {}: {}", req.request_id, req.method_name, req.path,
                             admitted.error().message);
        }
        a.answer = Render(api, admitted.error(), req);
      }
    } catch (const std::exception& e) {
      Log("http")->error("[req {}] {} {}: exception: {}", req.request_id, req.method_name, req.path,
                         e.what());
      a.answer = Render(api, MakeError(ErrorCode::Internal, "internal error"), req);
    }
  }
  if (a.answer) Finish(req, *a.answer);
  return a;
}

Response Router::Run(const Admission& a, Request& req) const {
  Response res;
  if (a.answer || !a.route) {
    // A caller bug: an early answer is sent as it is, never run.
    res = Render(ApiFamily::Plain, MakeError(ErrorCode::Internal, "request not admitted"), req);
    Finish(req, res);
    return res;
  }
  const ApiFamily api = a.route->api;
  try {
    Result<Response> out = a.route->handler(req);
    if (out) {
      res = std::move(*out);
    } else {
      if (out.error().code == ErrorCode::Internal) {
        Log("http")->error("[req {}] {} {}: {}", req.request_id, req.method_name, req.path,
                           out.error().message);
      }
      res = Render(api, out.error(), req);
    }
  } catch (const std::exception& e) {
    Log("http")->error("[req {}] {} {}: exception: {}", req.request_id, req.method_name, req.path,
                       e.what());
    res = Render(api, MakeError(ErrorCode::Internal, "internal error"), req);
  }
  Finish(req, res);
  return res;
}

Response Router::Dispatch(Request& req) const {
  Admission a = Admit(req);
  if (a.answer) return std::move(*a.answer);
  return Run(a, req);
}

}  // namespace hangar::http

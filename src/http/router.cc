#include "http/router.h"

#include <exception>

#include "core/log.h"

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

void Router::Add(Method method, std::string pattern, ApiFamily api, Handler handler,
                 bool authenticate) {
  Compiled c{Route{method, pattern, api, std::move(handler), authenticate}, {}};
  for (auto seg : SplitPath(pattern)) c.segments.emplace_back(seg);
  routes_.push_back(std::move(c));
}

const Router::Compiled* Router::Match(Method method, std::string_view path, Request& req,
                                      bool& path_matched) const {
  path_matched = false;
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& c : routes_) {
    if (!MatchSegments(c.segments, path, params)) continue;
    path_matched = true;
    bool method_ok = c.route.method == method ||
                     (method == Method::Head && c.route.method == Method::Get);
    if (!method_ok) continue;
    req.params = std::move(params);
    return &c;
  }
  return nullptr;
}

Response Router::Render(ApiFamily api, const Error& err, const Request& req) const {
  if (render_) return render_(api, err, req);
  return Response::Text(Describe(err.code).http_status, err.message + "\n");
}

// X-Request-Id and CORS headers, on every response the router makes.
void Router::Decorate(Response& res, const Request& req) const {
  res.SetHeader("X-Request-Id", req.request_id);
  if (!req.Header("origin").empty()) {
    res.SetHeader("Access-Control-Allow-Origin", "*");
    res.SetHeader("Access-Control-Expose-Headers", kExposeHeaders);
  }
}

Router::Admission Router::Admit(Request& req) const {
  Admission a;
  bool path_matched = false;
  const Compiled* c = Match(req.method, req.path, req, path_matched);
  ApiFamily api = c ? c->route.api : ApiFamily::Plain;
  if (req.method == Method::Options && path_matched) {
    // CORS preflight (hf-api.md §1.14).
    Response res;
    res.status = 204;
    res.SetHeader("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    res.SetHeader("Access-Control-Allow-Headers", "Authorization, Range, Content-Type");
    res.SetHeader("Access-Control-Max-Age", "86400");
    a.answer = std::move(res);
  } else if (!c) {
    a.answer = path_matched
                   ? Render(api, MakeError(ErrorCode::MethodNotAllowed,
                                           "method " + req.method_name + " not allowed here"),
                            req)
                   : Render(api, MakeError(ErrorCode::NotFound, "no such endpoint: " + req.path),
                            req);
  } else {
    try {
      Result<Principal> who = authenticate_ && c->route.authenticate ? authenticate_(req)
                                                                     : Principal::Anonymous();
      if (!who) {
        a.answer = Render(api, who.error(), req);
      } else {
        req.principal = std::move(*who);
        a.route = &c->route;
      }
    } catch (const std::exception& e) {
      Log("http")->error("[req {}] {} {}: exception: {}", req.request_id, req.method_name,
                         req.path, e.what());
      a.answer = Render(api, MakeError(ErrorCode::Internal, "internal error"), req);
    }
  }
  if (a.answer) Decorate(*a.answer, req);
  return a;
}

Response Router::Run(const Admission& a, Request& req) const {
  Response res;
  if (!a.route) {
    res = Render(ApiFamily::Plain, MakeError(ErrorCode::Internal, "no admitted route"), req);
    Decorate(res, req);
    return res;
  }
  ApiFamily api = a.route->api;
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
    Log("http")->error("[req {}] {} {}: exception: {}", req.request_id, req.method_name,
                       req.path, e.what());
    res = Render(api, MakeError(ErrorCode::Internal, "internal error"), req);
  }
  Decorate(res, req);
  return res;
}

Response Router::Dispatch(Request& req) const {
  Admission a = Admit(req);
  if (a.answer) return std::move(*a.answer);
  return Run(a, req);
}

}  // namespace hangar::http

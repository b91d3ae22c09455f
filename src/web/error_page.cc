#include "web/error_page.h"

#include "web/view.h"
#include "web/web_util.h"

namespace hangar::web {

http::Response RenderErrorPage(const Error& err, const http::Request& req) {
  // Signing in comes first, for a gated repo's files too.
  const bool sign_in = err.code == ErrorCode::Unauthorized || err.code == ErrorCode::GatedRepo;
  if (sign_in && req.method == http::Method::Get && req.principal.anonymous &&
      !req.HasHeader("authorization")) {
    http::Response res;
    res.status = 303;
    res.SetHeader("Location", "/login?next=" + EncodeSegment(req.target));
    res.SetHeader("Cache-Control", "no-store");
    return res;
  }
  const ErrorInfo& info = Describe(err.code);
  // A gated repo's files: 401 to an anonymous caller, as on the API (docs/gating.md).
  const int status =
      err.code == ErrorCode::GatedRepo && req.principal.anonymous ? 401 : info.http_status;
  Data data;
  data.set("status", std::to_string(status));
  data.set("code", std::string(info.name));
  data.set("message", err.message);
  data.set("request_id", req.request_id);
  data.set("not_found", info.http_status == 404);
  data.set("unauthorized", status == 401);
  http::Response res;
  auto body = RenderTemplate("error", data);
  Data layout;
  layout.set("title", std::to_string(status) + " " + std::string(info.name));
  if (body) layout.set("body", *body);
  auto page = body ? RenderTemplate("layout", layout) : body;
  if (page) {
    res = http::Response::Text(status, std::move(*page), "text/html; charset=utf-8");
  } else {
    res = http::Response::Text(status, err.message + "\n");
  }
  // The HF API's error headers, for scripts that post to a page (ask-access with a token).
  res.SetHeader("X-Error-Code", std::string(info.name));
  res.SetHeader("X-Error-Message", http::HeaderSafe(err.message));
  res.SetHeader("Cache-Control", "no-store");
  SetPageSecurityHeaders(res);
  return res;
}

}  // namespace hangar::web

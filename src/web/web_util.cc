#include "web/web_util.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

#include "core/util.h"

namespace hangar::web {
namespace {

constexpr size_t kMaxFormBytes = 64 << 10;
constexpr std::string_view kFragmentPrefix = "<hangar-fragment-";
constexpr std::string_view kBodyMarker = "<hangar-body>";

std::string_view HostOf(std::string_view url) {
  auto p = url.find("://");
  if (p != std::string_view::npos) url.remove_prefix(p + 3);
  return url.substr(0, url.find('/'));
}

bool SameToken(std::string_view a, std::string_view b) {
  return !a.empty() && a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool ValidCsrfCookie(std::string_view v) {
  if (v.size() != 32) return false;
  for (char c : v) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string Form::Get(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return v;
  }
  return {};
}

bool Form::Has(std::string_view key) const {
  for (const auto& f : fields) {
    if (f.first == key) return true;
  }
  return false;
}

Result<void> Form::OnlyFields(std::initializer_list<std::string_view> known) const {
  for (const auto& f : fields) {
    if (f.first == "_csrf" || std::find(known.begin(), known.end(), f.first) != known.end())
      continue;
    return MakeError(ErrorCode::BadRequest, "unknown form field '" + f.first.substr(0, 100) + "'");
  }
  return {};
}

std::string CookieValue(const http::Request& req, std::string_view name) {
  for (const auto& [k, v] : req.headers) {
    if (k != "cookie") continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      auto semi = rest.find(';');
      std::string_view pair = TrimBlanks(rest.substr(0, semi));
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      auto eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == name)
        return std::string(pair.substr(eq + 1));
    }
  }
  return {};
}

Result<PageContext> Begin(WebDeps& deps, const http::Request& req) {
  PageContext ctx;
  ctx.secure_cookies = deps.config.server.public_url.starts_with("https://");
  if (req.HasHeader("authorization")) {
    HANGAR_ASSIGN_OR_RETURN(ctx.principal,
                            deps.authenticator.Authenticate(req.Header("authorization")));
    ctx.signed_in = !ctx.principal.anonymous;
  } else if (std::string cookie = CookieValue(req, kSessionCookie); !cookie.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto session, deps.sessions.Find(cookie));
    if (session) {
      ctx.principal = session->principal;
      ctx.signed_in = true;
      ctx.csrf = session->csrf;
    }
  }
  if (ctx.csrf.empty()) {
    // Before sign-in (and for token users) forms carry a double-submit cookie's value.
    ctx.csrf = CookieValue(req, kCsrfCookie);
    if (!ValidCsrfCookie(ctx.csrf)) {
      ctx.csrf = RandomAlnum(32);
      ctx.set_csrf_cookie = ctx.csrf;
    }
  }
  return ctx;
}

Result<Form> ParseForm(http::Request& req) {
  std::string_view type = req.Header("content-type");
  if (!type.starts_with("application/x-www-form-urlencoded"))
    return MakeError(ErrorCode::BadRequest, "expected a form (application/x-www-form-urlencoded)");
  HANGAR_ASSIGN_OR_RETURN(std::string body, req.ReadBody(kMaxFormBytes));
  Form form;
  std::string_view rest = body;
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string k(pair.substr(0, eq));
    std::string v(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    for (auto* s : {&k, &v}) {
      for (char& c : *s) {
        if (c == '+') c = ' ';
      }
      bool ok = true;
      *s = PercentDecode(*s, &ok);
      if (!ok) return MakeError(ErrorCode::BadRequest, "malformed form field");
    }
    form.fields.emplace_back(std::move(k), std::move(v));
  }
  return form;
}

Result<Form> ReadForm(http::Request& req, const PageContext& ctx) {
  HANGAR_ASSIGN_OR_RETURN(Form form, ParseForm(req));
  std::string_view origin = req.Header("origin");
  if (!origin.empty() && origin != "null" && HostOf(origin) != HostOf(req.base_url))
    return MakeError(ErrorCode::Forbidden, "CSRF check failed: cross-origin form post");
  // A fresh context means the browser sent no CSRF cookie: nothing can match.
  if (!ctx.set_csrf_cookie.empty() || !SameToken(form.Get("_csrf"), ctx.csrf))
    return MakeError(ErrorCode::Forbidden,
                     "CSRF check failed: reload the page and submit the form again");
  return form;
}

namespace {

void AddCookies(const PageContext& ctx, http::Response& res) {
  if (ctx.set_csrf_cookie.empty()) return;
  res.AddHeader("Set-Cookie", std::string(kCsrfCookie) + "=" + ctx.set_csrf_cookie +
                                  "; Path=/; HttpOnly; SameSite=Lax" +
                                  (ctx.secure_cookies ? "; Secure" : ""));
}

}  // namespace

std::string FragmentMarker(size_t i) {
  return std::string(kFragmentPrefix) + std::to_string(i) + ">";
}

namespace {

// Appends `text` to `out` with each FragmentMarker(i) replaced by fragments[i].
void Splice(std::string& out, std::string_view text,
            const std::vector<std::string_view>& fragments) {
  while (!text.empty()) {
    size_t at = fragments.empty() ? std::string_view::npos : text.find(kFragmentPrefix);
    if (at == std::string_view::npos) {
      out += text;
      return;
    }
    out += text.substr(0, at);
    text.remove_prefix(at + kFragmentPrefix.size());
    size_t end = text.find('>');
    size_t i = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + std::min(end, text.size()), i);
    if (ec == std::errc() && p == text.data() + end && i < fragments.size()) {
      out += fragments[i];
      text.remove_prefix(end + 1);
    } else {
      out += kFragmentPrefix;  // not one of ours: kept as it was
    }
  }
}

}  // namespace

Result<http::Response> Html(const PageContext& ctx, int status, std::string_view title,
                            std::string_view tmpl, Data& data,
                            std::vector<std::string_view> fragments, std::string_view layout_name) {
  HANGAR_ASSIGN_OR_RETURN(std::string body, RenderTemplate(tmpl, data));
  Data layout;
  layout.set("title", std::string(title));
  layout.set("body", std::string(kBodyMarker));
  layout.set("csrf", ctx.csrf);
  if (ctx.signed_in) {
    Data user;
    user.set("name", ctx.principal.name);
    user.set("admin", ctx.principal.is_admin);
    layout.set("user", user);
  }
  HANGAR_ASSIGN_OR_RETURN(std::string frame, RenderTemplate(layout_name, layout));
  size_t at = frame.find(kBodyMarker);
  if (at == std::string::npos) return MakeError(ErrorCode::Internal, "layout has no {{{body}}}");
  size_t size = frame.size() + body.size();
  for (const auto& f : fragments) size += f.size();
  std::string page;
  page.reserve(size);
  page.append(frame, 0, at);
  Splice(page, body, fragments);
  page.append(frame, at + kBodyMarker.size());
  http::Response res = http::Response::Text(status, std::move(page), "text/html; charset=utf-8");
  res.SetHeader("Cache-Control", "no-cache");
  AddCookies(ctx, res);
  return res;
}

http::Response SeeOther(const PageContext& ctx, std::string location) {
  http::Response res;
  res.status = 303;
  res.SetHeader("Location", std::move(location));
  AddCookies(ctx, res);
  return res;
}

std::string HumanSize(uint64_t bytes) {
  static const char* kUnits[] = {"Bytes", "kB", "MB", "GB", "TB", "PB"};
  if (bytes < 1000) return std::to_string(bytes) + " Bytes";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v < 10    ? "%.2f %s"
                : v < 100 ? "%.1f %s"
                          : "%.0f %s",
                v, kUnits[u]);
  return buf;
}

std::string Ago(int64_t t) {
  int64_t d = NowUnix() - t;
  if (d < 0) d = 0;
  auto plural = [](int64_t n, const char* unit) {
    return std::to_string(n) + " " + unit + (n == 1 ? "" : "s") + " ago";
  };
  if (d < 60) return "just now";
  if (d < 3600) return plural(d / 60, "minute");
  if (d < 86400) return plural(d / 3600, "hour");
  if (d < 30 * 86400) return plural(d / 86400, "day");
  if (d < 365 * 86400) return plural(d / (30 * 86400), "month");
  return Iso8601(t).substr(0, 10);
}

std::string RepoPath(const RepoId& id) {
  std::string prefix = id.type == RepoType::Dataset ? "/datasets/"
                       : id.type == RepoType::Space ? "/spaces/"
                                                    : "/";
  return prefix + id.ns + "/" + id.name;
}

std::string EncodeSegment(std::string_view s) { return PercentEncode(s, false); }

std::string EncodePath(std::string_view path) { return PercentEncode(path, true); }

Result<std::string> DecodedParam(const http::Request& req, std::string_view name) {
  bool ok = true;
  std::string v = PercentDecode(req.Param(name), &ok);
  if (!ok || v.find('\0') != std::string::npos)
    return MakeError(ErrorCode::BadRequest,
                     "malformed URL: invalid escape in " + std::string(name));
  std::string_view rest = v;
  while (!rest.empty()) {
    auto slash = rest.find('/');
    if (rest.substr(0, slash) == "..")
      return MakeError(ErrorCode::BadRequest, "malformed URL: '..' in a path");
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return v;
}

std::string EscapeHtml(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  AppendEscapedMarkup(out, s);
  return out;
}

void SetPageSecurityHeaders(http::Response& res) {
  res.SetHeader("X-Content-Type-Options", "nosniff");
  res.SetHeader("Referrer-Policy", "same-origin");
  if (!res.GetHeader("Content-Security-Policy").empty()) return;
  res.SetHeader("Content-Security-Policy",
                "default-src 'self'; img-src 'self' https: data:; script-src 'self'; "
                "style-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                "frame-ancestors 'none'");
  res.SetHeader("X-Frame-Options", "DENY");
}

}  // namespace hangar::web

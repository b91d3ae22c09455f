#pragma once
// What every web page handler shares: the services it calls (WebDeps), who is browsing
// (PageContext: session cookie or token, and the CSRF token forms carry), form parsing
// with the CSRF check, rendering into the layout, and small formatting helpers.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/lru.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "http/request.h"
#include "http/response.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/auth/authenticator.h"
#include "services/auth/session_service.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"
#include "web/view.h"

namespace hangar::services {
class RegistryService;    // services/registry/registry_service.h
class SshKeyService;      // services/git/ssh_keys.h
class MirrorService;      // services/mirror/mirror_service.h
class UpstreamCache;      // services/mirror/upstream_cache.h
class GateService;        // services/repo/gate_service.h
class DiscussionService;  // services/discussion/discussion_service.h
class SocialService;      // services/social/social_service.h
class CollectionService;  // services/collection/collection_service.h
}  // namespace hangar::services
namespace hangar::services::viewer {
class ViewerService;  // services/viewer/viewer_service.h
}

namespace hangar::services {
class ImportService;
}  // namespace hangar::services

namespace hangar::web {

inline constexpr std::string_view kSessionCookie = "hangar_session";
inline constexpr std::string_view kCsrfCookie = "hangar_csrf";  // before sign-in

struct RenderedCode;  // web/pages/repo_pages.cc
struct RenderedCard;

// What pages keep between requests, passed in with WebDeps (one per router): rendered file
// views and model cards, by the blob they were made from and bounded in bytes (a
// 7,000-line file is 7,000 rows to build; a large card takes cmark and the sanitizer).
struct PageCaches {
  static constexpr size_t kCodeBytes = size_t{64} << 20;
  static constexpr size_t kCardBytes = size_t{32} << 20;
  LruCache<std::shared_ptr<const RenderedCode>> code{kCodeBytes};
  LruCache<std::shared_ptr<const RenderedCard>> cards{kCardBytes};
};

// The services pages call, and their caches; all outlive the router.
struct WebDeps {
  services::Authenticator& authenticator;
  services::AccessPolicy& access;
  services::SessionService& sessions;
  services::RepoService& repos;
  services::ContentService& content;
  services::ImportService& imports;
  services::AccountService& accounts;
  const config::Config& config;
  PageCaches& caches;
  services::viewer::ViewerService* viewer = nullptr;   // null: the viewer is off
  services::RegistryService* registry = nullptr;       // the model registry's pages
  services::SshKeyService* ssh_keys = nullptr;         // SSH keys and deploy keys' pages
  services::MirrorService* mirrors = nullptr;          // a mirror's state on its repo page
  services::UpstreamCache* upstream = nullptr;         // null: no pull-through cache
  services::GateService* gates = nullptr;              // gated repos' access requests
  services::DiscussionService* discussions = nullptr;  // discussions and pull requests
  services::SocialService* social = nullptr;           // likes
  services::CollectionService* collections = nullptr;  // collections and their pages
};

// Who is browsing, as established from the request.
struct PageContext {
  Principal principal;  // anonymous, or the session's / token's user
  bool signed_in = false;
  std::string csrf;             // the token this page's forms carry
  std::string set_csrf_cookie;  // a new anonymous CSRF cookie value to send, or ""
  bool secure_cookies = false;  // public URL is https: cookies get Secure
};

// A parsed application/x-www-form-urlencoded body.
class Form {
 public:
  // The first value of `key` ("" when absent).
  std::string Get(std::string_view key) const;
  bool Has(std::string_view key) const;
  // Errors: BadRequest naming the first field that is neither `_csrf` nor in `known`, so
  // a setting a page does not offer is refused, never accepted and ignored (issue #13).
  Result<void> OnlyFields(std::initializer_list<std::string_view> known) const;
  std::vector<std::pair<std::string, std::string>> fields;
};

// The page context of `req`: a valid Authorization header wins, else the session cookie.
// A bad token is an error (Unauthorized), a stale cookie is just anonymous.
Result<PageContext> Begin(WebDeps& deps, const http::Request& req);

// Reads a form POST (at most 64 KiB) and checks its `_csrf` field against the session's
// token (or, before sign-in, the CSRF cookie) and, when sent, that Origin is this host.
// Errors: Forbidden "CSRF check failed…", PayloadTooLarge, BadRequest (not a form).
Result<Form> ReadForm(http::Request& req, const PageContext& ctx);
// ReadForm without the CSRF and Origin checks: only for a caller signed in by an
// Authorization header, which no other site can make a browser send. Errors: as ReadForm's
// but Forbidden.
Result<Form> ParseForm(http::Request& req);

// Renders templates/<tmpl> inside the layout with status `status`. `data` gets the
// layout's common fields (user, csrf, title). Large HTML built by the page (a file's lines,
// a blame) goes in `fragments`: fragments[i] replaces FragmentMarker(i), which `data` puts
// in an unescaped {{{key}}}; the template engine never copies them line by line, and they
// are copied once, into the page (they must live until Html returns). `layout` names the
// frame: "layout" (the site's header and footer) or "embed_layout" (none, for iframes).
// Errors: Internal.
Result<http::Response> Html(const PageContext& ctx, int status, std::string_view title,
                            std::string_view tmpl, Data& data,
                            std::vector<std::string_view> fragments = {},
                            std::string_view layout = "layout");

// "<hangar-fragment-N>": a placeholder no escaped text can contain (it has a '<').
std::string FragmentMarker(size_t i);

// A 303 redirect to `location` (a path on this site), with the page's cookies.
http::Response SeeOther(const PageContext& ctx, std::string location);

// The value of cookie `name` in the request's Cookie header, or "".
std::string CookieValue(const http::Request& req, std::string_view name);

// "1.5 MB" style sizes (decimal units, as the public hub shows them).
std::string HumanSize(uint64_t bytes);
// "3 days ago" relative to now; absolute ISO date past a year.
std::string Ago(int64_t unix_seconds);
// The site path of a repo: "/ns/name", "/datasets/ns/name", "/spaces/ns/name".
std::string RepoPath(const RepoId& id);
// Percent-encodes each '/'-separated segment of `path` for use in a URL.
std::string EncodePath(std::string_view path);
// Percent-encodes one segment (a revision may contain '/': it becomes %2F).
std::string EncodeSegment(std::string_view s);
// A decoded route parameter. Errors: BadRequest for invalid escapes, NUL or '..' segments.
Result<std::string> DecodedParam(const http::Request& req, std::string_view name);

}  // namespace hangar::web

namespace hangar::web {

// `s` with & < > " ' replaced by entities, for HTML text and attribute values.
std::string EscapeHtml(std::string_view s);
// Sets the security headers every page carries (CSP without inline scripts, nosniff,
// no framing, same-origin referrers). A page that set its own Content-Security-Policy (an
// embed, which other sites may frame) keeps it, and gets no X-Frame-Options.
void SetPageSecurityHeaders(http::Response& res);

}  // namespace hangar::web

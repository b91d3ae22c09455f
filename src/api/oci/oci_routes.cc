#include "api/oci/oci_routes.h"

#include <memory>

#include "api/error_render.h"
#include "api/oci/oci_handlers.h"
#include "core/util.h"

namespace hangar::api {

namespace oci {

OciPath ParseOciPath(std::string_view rest) {
  OciPath p;
  if (rest.empty()) {
    p.kind = OciResource::Base;
    return p;
  }
  if (rest == "_catalog") {
    p.kind = OciResource::Catalog;
    return p;
  }
  constexpr std::string_view kTags = "/tags/list";
  if (rest.size() > kTags.size() && rest.ends_with(kTags)) {
    p.kind = OciResource::Tags;
    p.name = std::string(rest.substr(0, rest.size() - kTags.size()));
    return p;
  }
  size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos) return p;
  std::string_view head = rest.substr(0, slash);
  p.ref = std::string(rest.substr(slash + 1));
  static constexpr std::pair<std::string_view, OciResource> kSuffixes[] = {
      {"/blobs/uploads", OciResource::Upload},
      {"/blobs", OciResource::Blob},
      {"/manifests", OciResource::Manifest},
      {"/referrers", OciResource::Referrers},
  };
  for (auto [suffix, kind] : kSuffixes) {
    if (head.size() > suffix.size() && head.ends_with(suffix)) {
      p.kind = kind == OciResource::Upload && p.ref.empty() ? OciResource::UploadStart : kind;
      p.name = std::string(head.substr(0, head.size() - suffix.size()));
      if (p.kind != OciResource::UploadStart && p.ref.empty()) p.kind = OciResource::Unknown;
      return p;
    }
  }
  return p;
}

OciAction ActionOf(const http::Request& req) {
  switch (req.method) {
    case http::Method::Get:
    case http::Method::Head:
      return OciAction::Pull;
    case http::Method::Delete:
      return OciAction::Delete;
    default:
      return OciAction::Push;
  }
}

http::Response Empty(int status) {
  http::Response res;
  res.status = status;
  res.content_length = 0;
  return res;
}

namespace {

http::Response NotFound(http::Request& req) {
  return RenderError(
      http::ApiFamily::Oci,
      MakeError(ErrorCode::NotFound, "no registry endpoint at " + req.path.substr(0, 300)), req);
}

// The answer to a refusal `e` of `who`'s request on `name`: a challenge where credentials
// could help (an anonymous caller of a private or gated repo too), else the error in the
// OCI shape.
http::Response Refusal(OciDeps& d, const http::Request& req, const Principal& who,
                       std::string_view name, const Error& e) {
  if (e.code == ErrorCode::Unauthorized ||
      (who.anonymous && (e.code == ErrorCode::RepoNotFound || e.code == ErrorCode::GatedRepo))) {
    return d.auth.Unauthorized(req, name, ActionOf(req), e.message);
  }
  http::Response out = RenderError(http::ApiFamily::Oci, e, req);
  if (e.code == ErrorCode::TooManyRequests) out.SetHeader("Retry-After", "5");
  return out;
}

}  // namespace

http::Response WithCaller(OciDeps& d, http::Request& req, std::string_view name,
                          const std::function<Result<http::Response>(const Principal&)>& fn) {
  // The router's check (AdmitCaller) resolved the caller for this name and action.
  auto res = fn(req.principal);
  if (res) return std::move(*res);
  return Refusal(d, req, req.principal, name, res.error());
}

std::optional<http::Response> AdmitCaller(OciDeps& d, http::Request& req) {
  OciPath p = ParseOciPath(PercentDecode(req.Param("rest")));
  if (p.kind == OciResource::Unknown) return NotFound(req);
  OciAction action = ActionOf(req);
  auto who = d.auth.Caller(req, p.name, action);
  if (!who) return d.auth.Unauthorized(req, p.name, action, who.error().message);
  req.principal = std::move(*who);
  if (p.name.empty()) return std::nullopt;  // /v2/ and the catalog: any caller
  // Pushes (upload starts, chunks, monolithic blobs, manifests: the requests with a body)
  // need write or the right to create the repo; pulls read; deletes write.
  Result<void> ok;
  if (action == OciAction::Push) {
    ok = d.registry.CheckPush(req.principal, p.name);
    auto declared = req.ContentLength();
    if (ok && p.kind == OciResource::Manifest && declared &&
        *declared > d.registry.MaxManifestBytes()) {
      ok = MakeError(
          ErrorCode::PayloadTooLarge,
          "manifest larger than " + std::to_string(d.registry.MaxManifestBytes()) + " bytes");
    }
  } else if (auto access = d.registry.AccessFor(req.principal, p.name); !access) {
    ok = std::move(access).error();
  } else if (action == OciAction::Delete && *access < Access::Write) {
    ok = MakeError(req.principal.anonymous ? ErrorCode::Unauthorized : ErrorCode::Forbidden,
                   "deleting from " + p.name + " needs write access");
  }
  if (!ok) return Refusal(d, req, req.principal, p.name, ok.error());
  return std::nullopt;
}

namespace {

http::Response Unsupported(http::Request& req) {
  return RenderError(http::ApiFamily::Oci,
                     MakeError(ErrorCode::MethodNotAllowed,
                               req.method_name + " is not supported on " + req.path.substr(0, 300)),
                     req);
}

// One method's dispatch on the parsed path.
http::Response Dispatch(OciDeps& d, http::Request& req) {
  OciPath p = ParseOciPath(PercentDecode(req.Param("rest")));
  const http::Method m = req.method == http::Method::Head ? http::Method::Get : req.method;
  switch (p.kind) {
    case OciResource::Base:
      return m == http::Method::Get ? HandleBase(d, req) : Unsupported(req);
    case OciResource::Catalog:
      return m == http::Method::Get ? HandleCatalog(d, req) : Unsupported(req);
    case OciResource::UploadStart:
      return m == http::Method::Post ? HandleUploadStart(d, req, p) : Unsupported(req);
    case OciResource::Upload:
      return m == http::Method::Post ? Unsupported(req) : HandleUpload(d, req, p);
    case OciResource::Blob:
      return m == http::Method::Get || m == http::Method::Delete ? HandleBlob(d, req, p)
                                                                 : Unsupported(req);
    case OciResource::Manifest:
      return m == http::Method::Get || m == http::Method::Put || m == http::Method::Delete
                 ? HandleManifest(d, req, p)
                 : Unsupported(req);
    case OciResource::Tags:
      return m == http::Method::Get ? HandleTags(d, req, p) : Unsupported(req);
    case OciResource::Referrers:
      return m == http::Method::Get ? HandleReferrers(d, req, p) : Unsupported(req);
    case OciResource::Unknown:
      break;
  }
  return NotFound(req);
}

}  // namespace
}  // namespace oci

void AddOciRoutes(http::Router& router, services::OciService& registry, const OciAuth& auth) {
  AddOciTokenRoute(router, auth, registry);
  // Shared by the route closures; the router keeps them (and so this) alive.
  auto deps = std::make_shared<oci::OciDeps>(oci::OciDeps{registry, auth});
  constexpr auto kVersionHeader = "Docker-Distribution-API-Version";
  auto handler = [deps](http::Request& req) -> Result<http::Response> {
    http::Response res = oci::Dispatch(*deps, req);
    res.SetHeader(kVersionHeader, "registry/2.0");
    return res;
  };
  // Credentials are OciAuth's (registry tokens are not hub tokens), checked from the head.
  const auto registry_auth = http::Requirement::Registry([deps](http::Request& req) {
    auto refused = oci::AdmitCaller(*deps, req);
    if (refused) refused->SetHeader(kVersionHeader, "registry/2.0");
    return refused;
  });
  router.Add(http::Method::Get, "/v2", http::ApiFamily::Oci, registry_auth, handler);
  for (http::Method m : {http::Method::Get, http::Method::Post, http::Method::Put,
                         http::Method::Patch, http::Method::Delete}) {
    router.Add(m, "/v2/{rest*}", http::ApiFamily::Oci, registry_auth, handler);
  }
}

}  // namespace hangar::api

#include "web/web_routes.h"

#include <fstream>
#include <sstream>

#include "web/assets.h"
#include "web/error_page.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

// highlight.js as Debian ships it (libjs-highlight.js); served, not bundled.
constexpr const char* kHighlightDir = "/usr/share/javascript/highlight.js/";

Result<http::Response> StaticFile(http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string path, DecodedParam(req, "file"));
  std::string body;
  if (path.starts_with("hljs/")) {
    std::string rel = path.substr(5);
    if (rel.empty() || rel.find("..") != std::string::npos)
      return MakeError(ErrorCode::NotFound, "no such file");
    std::ifstream in(kHighlightDir + rel, std::ios::binary);
    if (!in) return MakeError(ErrorCode::NotFound, "no such file: " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    body = ss.str();
  } else {
    auto asset = Asset("static/" + path);
    if (!asset) return MakeError(ErrorCode::NotFound, "no such file: " + path);
    body = std::string(*asset);
  }
  auto res = http::Response::Text(200, std::move(body), ContentTypeFor(path));
  res.SetHeader("Cache-Control", "public, max-age=3600");
  res.SetHeader("X-Content-Type-Options", "nosniff");
  return res;
}

}  // namespace

void AddPage(http::Router& router, WebDeps& deps, http::Method method, std::string pattern,
             http::Requirement need, PageHandler handler) {
  router.Add(method, std::move(pattern), http::ApiFamily::Html, need,
             [&deps, handler = std::move(handler)](http::Request& req) -> Result<http::Response> {
               auto ctx = Begin(deps, req);
               // Errors become pages (RenderErrorPage: an anonymous GET that needs a user
               // is sent to /login instead).
               Result<http::Response> res = ctx ? handler(*ctx, req) : std::move(ctx).error();
               if (!res) return std::move(res).error();
               SetPageSecurityHeaders(*res);
               return res;
             });
}

void AddWebRoutes(http::Router& router, WebDeps& deps) {
  router.Add(http::Method::Get, "/static/{file*}", http::ApiFamily::Html,
             http::Requirement::Public(), StaticFile);
  AddListingPages(router, deps);
  AddAccountPages(router, deps);
  AddKeyPages(router, deps);
  AddUpstreamTokenPages(router, deps);
  AddViewerPages(router, deps);
  AddRegistryPages(router, deps);
  AddCollectionPages(router, deps);
  for (RepoType type : {RepoType::Dataset, RepoType::Space, RepoType::Model}) {
    AddHistoryPages(router, deps, type);
    AddRepoPages(router, deps, type);
  }
  AddProfilePages(router, deps);
}

}  // namespace hangar::web

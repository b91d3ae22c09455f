// Manifests (end-3, end-7, end-9), tags (end-8), referrers (end-12) and the catalog:
// oci.md §3.1, §5, §6, §7.

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "api/error_render.h"
#include "api/oci/oci_handlers.h"
#include "core/oci_media_types.h"
#include "core/util.h"
#include "http/preconditions.h"

namespace hangar::api::oci {

namespace json = boost::json;

namespace {

// Whether the client's Accept headers admit `media_type` (oci.md §3.1, as the reference
// registry: no Accept, or one listing the type, */* or application/*).
bool Accepts(const http::Request& req, std::string_view media_type) {
  bool any = false;
  for (const auto& [k, v] : req.headers) {
    if (k != "accept") continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      item = TrimBlanks(item.substr(0, item.find(';')));
      if (item.empty()) continue;
      any = true;
      if (item == media_type || item == "*/*" || item == "application/*") return true;
    }
  }
  return !any;
}

// `n` of a listing (oci.md §6.1): nullopt when absent; a count past what an int holds is
// clamped (the service caps pages far lower anyway) rather than refused, so "n=99999999999"
// asks for everything as it means to. Errors: BadRequest for anything but digits.
Result<std::optional<int>> PageSize(const http::Request& req) {
  auto n = req.Query("n");
  if (!n) return std::optional<int>();
  bool digits = !n->empty() && n->size() <= 1000 &&
                std::all_of(n->begin(), n->end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return MakeError(ErrorCode::BadRequest,
                     "n must be a non-negative integer, got \"" + n->substr(0, 50) + "\"");
  }
  int v = 0;
  auto [p, ec] = std::from_chars(n->data(), n->data() + n->size(), v);
  if (ec == std::errc::result_out_of_range) v = std::numeric_limits<int>::max();
  return std::optional<int>(v);
}

// A JSON listing with a Link to the next page when there is one (oci.md §6.1).
http::Response NamePage(std::string_view path, const char* key, json::object body,
                        const services::OciNamePage& page, std::optional<int> n) {
  json::array names;
  for (const auto& t : page.names) names.emplace_back(t);
  body[key] = std::move(names);
  http::Response res = http::Response::Json(200, json::serialize(body));
  if (page.more && !page.names.empty()) {
    res.SetHeader("Link", "<" + std::string(path) + "?n=" +
                              std::to_string(n.value_or(static_cast<int>(page.names.size()))) +
                              "&last=" + PercentEncode(page.names.back()) + ">; rel=\"next\"");
  }
  return res;
}

http::Response ManifestResponse(const http::Request& req, services::OciManifestRead m) {
  const std::string etag = "\"" + m.digest + "\"";
  std::optional<int> status = http::EvaluatePreconditions(req, etag);
  // Some clients send the digest unquoted.
  if (!status && TrimBlanks(req.Header("if-none-match")) == m.digest) status = 304;
  http::Response res;
  if (status == 412) {
    res = RenderError(
        http::ApiFamily::Oci,
        MakeError(ErrorCode::PreconditionFailed, "the manifest is not one If-Match names"), req);
  } else if (status == 304) {
    res = Empty(304);
  } else {
    res = http::Response::Json(200, std::move(m.body), m.media_type);
  }
  res.SetHeader("Docker-Content-Digest", m.digest);
  res.SetHeader("Etag", etag);
  return res;
}

}  // namespace

http::Response HandleManifest(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    auto& reg = d.registry;
    if (req.method == http::Method::Delete) {
      HANGAR_TRY(reg.DeleteManifest(who, p.name, p.ref));
      return Empty(202);
    }
    if (req.method == http::Method::Put) {
      std::vector<std::string> tags = req.QueryAll("tag");
      HANGAR_ASSIGN_OR_RETURN(
          auto put,
          reg.PutManifest(who, p.name, p.ref, req.Header("content-type"), *req.body, tags));
      http::Response res = Empty(201);
      res.SetHeader("Location", "/v2/" + p.name + "/manifests/" + put.digest);
      res.SetHeader("Docker-Content-Digest", put.digest);
      if (!put.subject.empty()) res.SetHeader("OCI-Subject", put.subject);
      if (!tags.empty()) {
        std::string list;
        for (const auto& t : put.tags) list += (list.empty() ? "" : ", ") + t;
        res.SetHeader("OCI-Tag", list);
      }
      return res;
    }
    HANGAR_ASSIGN_OR_RETURN(auto m, reg.GetManifest(who, p.name, p.ref));
    if (!Accepts(req, m.media_type)) {
      return MakeError(ErrorCode::ManifestUnknown,
                       "manifest " + p.ref + " is " + m.media_type +
                           ", which the request's Accept header does not list");
    }
    return ManifestResponse(req, std::move(m));
  });
}

http::Response HandleTags(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    HANGAR_ASSIGN_OR_RETURN(auto n, PageSize(req));
    HANGAR_ASSIGN_OR_RETURN(auto page,
                            d.registry.ListTags(who, p.name, n, req.Query("last").value_or("")));
    return NamePage("/v2/" + p.name + "/tags/list", "tags", json::object{{"name", p.name}}, page,
                    n);
  });
}

http::Response HandleReferrers(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    HANGAR_ASSIGN_OR_RETURN(
        auto refs,
        d.registry.ListReferrers(who, p.name, p.ref, req.Query("artifactType").value_or("")));
    http::Response res =
        http::Response::Json(200, std::move(refs.body), std::string(hangar::oci::kIndexType));
    if (refs.filter_applied) res.SetHeader("OCI-Filters-Applied", "artifactType");
    return res;
  });
}

http::Response HandleCatalog(OciDeps& d, http::Request& req) {
  return WithCaller(d, req, "", [&](const Principal& who) -> Result<http::Response> {
    HANGAR_ASSIGN_OR_RETURN(auto n, PageSize(req));
    HANGAR_ASSIGN_OR_RETURN(auto page, d.registry.Catalog(who, n, req.Query("last").value_or("")));
    return NamePage("/v2/_catalog", "repositories", json::object{}, page, n);
  });
}

}  // namespace hangar::api::oci

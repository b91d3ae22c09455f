// The HF multipart transfer's hrefs (hf-api.md §7.4): part PUTs and the completion POST,
// authorised by the ticket in the URL (the hub clients send no Authorization on them).

#include <boost/json.hpp>

#include <limits>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/lfs/lfs_handlers.h"
#include "core/util.h"

namespace hangar::api::lfs {

namespace json = boost::json;

namespace {

// {"oid": "...", "parts": [{"partNumber": n, "etag": "..."}, ...]}.
Result<std::vector<services::LfsPartRef>> ParseCompletion(const json::object& body,
                                                          const Sha256& oid) {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::Unprocessable, std::move(m)); };
  if (const json::value* o = body.if_contains("oid"); o && !o->is_null()) {
    if (!o->is_string() || o->get_string() != oid.Hex()) {
      return invalid("oid must be the object of this upload, " + oid.Hex());
    }
  }
  const json::value* parts = body.if_contains("parts");
  if (!parts || !parts->is_array()) return invalid("parts must be an array");
  std::vector<services::LfsPartRef> out;
  out.reserve(parts->get_array().size());
  for (const auto& e : parts->get_array()) {
    const json::object* p = e.if_object();
    const json::value* n = p ? p->if_contains("partNumber") : nullptr;
    const json::value* etag = p ? p->if_contains("etag") : nullptr;
    std::optional<uint64_t> number;
    if (n && n->is_int64() && n->get_int64() > 0) number = static_cast<uint64_t>(n->get_int64());
    if (n && n->is_uint64()) number = n->get_uint64();
    if (n && n->is_string()) number = ParseUint64(n->get_string());
    if (!number || !etag || !etag->is_string()) {
      return invalid("each part must have a partNumber and an etag string");
    }
    out.push_back({*number, std::string(etag->get_string())});
  }
  return out;
}

}  // namespace

Result<http::Response> HandlePartUpload(services::LfsService& lfs, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto oid, OidParam(req));
  auto part = ParseUint64(req.Param("part"));
  if (!part) return MakeError(ErrorCode::NotFound, "no such part URL: " + req.path);
  HANGAR_ASSIGN_OR_RETURN(
      auto etag, lfs.UploadPart(req.Param("ticket"), oid, std::string(req.Param("upload")), *part,
                                *req.body, req.ContentLength()));
  http::Response res = http::Response::Json(200, "{}", kLfsMediaType);
  res.SetHeader("ETag", etag);
  return res;
}

Result<http::Response> HandleMultipartComplete(services::LfsService& lfs, http::Request& req,
                                               int64_t max_body_bytes) {
  HANGAR_ASSIGN_OR_RETURN(auto oid, OidParam(req));
  HANGAR_ASSIGN_OR_RETURN(
      auto body, ReadJsonObject(req, static_cast<size_t>(std::max<int64_t>(0, max_body_bytes)),
                                ErrorCode::Unprocessable));
  HANGAR_ASSIGN_OR_RETURN(auto parts, ParseCompletion(body, oid));
  HANGAR_TRY(
      lfs.CompleteMultipart(req.Param("ticket"), oid, std::string(req.Param("upload")), parts));
  return http::Response::Json(200, "{}", kLfsMediaType);
}

}  // namespace hangar::api::lfs

// Native upload API handlers (docs/uploads.md): parse, call UploadService, render.

#include "api/uploads/upload_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {

namespace json = boost::json;
using services::UploadService;

namespace {

std::string IsoTime(int64_t unix_seconds) {
  char buf[32];
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json::object PartJson(const storage::PartInfo& p) {
  return json::object{{"partNumber", p.number}, {"size", p.size}, {"etag", p.etag}};
}

// The upload document of docs/uploads.md.
json::object UploadJson(const http::Request& req, const services::UploadView& v) {
  const db::UploadRecord& u = v.record;
  json::object o{{"id", u.id},
                 {"state", v.complete ? "complete" : "open"},
                 {"sha256", u.sha256.Hex()},
                 {"size", u.size},
                 {"partSize", u.part_size},
                 {"partCount", u.PartCount()},
                 {"expiresAt", IsoTime(u.expires_at)}};
  if (v.complete) return o;
  json::array parts;
  for (const auto& p : v.parts) parts.push_back(PartJson(p));
  o["parts"] = std::move(parts);
  json::array urls;
  if (!v.part_urls.empty()) {
    for (const auto& url : v.part_urls) urls.push_back(json::string(url));
  } else {
    std::string base = req.base_url + "/api/uploads/" + u.id + "/parts/";
    for (uint64_t n = 1; n <= u.PartCount(); ++n)
      urls.push_back(json::string(base + std::to_string(n)));
  }
  o["partUrls"] = std::move(urls);
  return o;
}

// The {id} route parameter: 32 lower-case hex, else NotFound (no such upload).
Result<std::string> UploadId(const http::Request& req) {
  std::string id(req.Param("id"));
  bool ok = id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
              return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
            });
  if (!ok) return MakeError(ErrorCode::NotFound, "upload " + id + " not found");
  return id;
}

// A positive integer from text, or nullopt.
std::optional<uint64_t> ParsePositive(std::string_view s) {
  auto v = ParseUint64(s);
  if (v == 0) return std::nullopt;
  return v;
}

Result<http::Response> HandleCreate(UploadService& uploads, const config::LimitsConfig& limits,
                                    http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body,
                          ReadJsonObject(req, static_cast<size_t>(limits.max_json_body_bytes)));
  const json::value* sha = body.if_contains("sha256");
  std::optional<Sha256> oid;
  if (sha && sha->is_string()) oid = Sha256::ParseHex(sha->as_string());
  if (!oid) {
    return MakeError(ErrorCode::BadRequest, "'sha256' must be 64 lower-case hex characters");
  }
  const json::value* size = body.if_contains("size");
  if (!size || !size->is_int64() || size->as_int64() < 0) {
    return MakeError(ErrorCode::BadRequest, "'size' must be a non-negative integer (bytes)");
  }
  const int64_t bytes = size->as_int64();
  std::optional<uint64_t> hint;
  if (const json::value* ps = body.if_contains("partSize"); ps && !ps->is_null()) {
    if (!ps->is_int64() || ps->as_int64() <= 0) {
      return MakeError(ErrorCode::BadRequest, "'partSize' must be a positive integer");
    }
    hint = static_cast<uint64_t>(ps->as_int64());
  }
  HANGAR_ASSIGN_OR_RETURN(auto start, uploads.Create(req.principal, repo, *oid, bytes, hint));
  if (start.present) {
    return JsonResponse(
        json::object{{"state", "present"}, {"sha256", oid->Hex()}, {"size", bytes}});
  }
  return JsonResponse(UploadJson(req, start.upload), start.resumed ? 200 : 201);
}

Result<http::Response> HandleGet(UploadService& uploads, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string id, UploadId(req));
  HANGAR_ASSIGN_OR_RETURN(auto view, uploads.Get(req.principal, id));
  return JsonResponse(UploadJson(req, view));
}

// The upload id and part number a part route names. Errors: NotFound.
Result<std::pair<std::string, uint64_t>> PartParams(const http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string id, UploadId(req));
  auto number = ParsePositive(req.Param("n"));
  if (!number)
    return MakeError(ErrorCode::NotFound, "no such part: " + std::string(req.Param("n")));
  return std::make_pair(std::move(id), *number);
}

// The router's check of a part PUT, from its head (Requirement::Also).
Result<void> CheckPutPart(UploadService& uploads, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto part, PartParams(req));
  // A body without framing is 0 bytes: refused here, before the stored copy is dropped.
  return uploads.CheckPart(req.principal, part.first, part.second, req.DeclaredBodyLength());
}

Result<http::Response> HandlePutPart(UploadService& uploads, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto params, PartParams(req));
  const auto& [id, number] = params;
  std::optional<Sha256> part_sha;
  if (req.HasHeader("x-part-sha256")) {
    part_sha = Sha256::ParseHex(req.Header("x-part-sha256"));
    if (!part_sha) {
      return MakeError(ErrorCode::BadRequest, "X-Part-Sha256 must be 64 lower-case hex characters");
    }
  }
  if (!req.ContentLength() && !req.HasHeader("transfer-encoding")) {
    return MakeError(ErrorCode::BadRequest, "a part needs a Content-Length");
  }
  HANGAR_ASSIGN_OR_RETURN(auto part, uploads.PutPart(req.principal, id, number, *req.body,
                                                     req.ContentLength(), part_sha));
  http::Response res = JsonResponse(PartJson(part));
  res.SetHeader("ETag", "\"" + part.etag + "\"");
  return res;
}

Result<http::Response> HandleComplete(UploadService& uploads, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string id, UploadId(req));
  HANGAR_ASSIGN_OR_RETURN(auto view, uploads.Complete(req.principal, id));
  return JsonResponse(json::object{
      {"state", "complete"}, {"sha256", view.record.sha256.Hex()}, {"size", view.record.size}});
}

Result<http::Response> HandleAbort(UploadService& uploads, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string id, UploadId(req));
  HANGAR_TRY(uploads.Abort(req.principal, id));
  http::Response res;
  res.status = 204;
  return res;
}

}  // namespace

void AddUploadRoutes(http::Router& r, UploadService& uploads, const config::LimitsConfig& limits) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    r.Add(Method::Post, "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}/uploads",
          ApiFamily::Hf, Requirement::Repo(t, Access::Write),
          [&uploads, &limits, t](http::Request& q) { return HandleCreate(uploads, limits, q, t); });
  }
  // An upload belongs to the writer who began it; UploadService checks who that was. Its
  // state may be read with any of their tokens, changed only with one that may write.
  const Requirement writer = Requirement::WriteRole();
  r.Add(Method::Get, "/api/uploads/{id}", ApiFamily::Hf, Requirement::SignedIn(),
        [&uploads](http::Request& q) { return HandleGet(uploads, q); });
  r.Add(Method::Delete, "/api/uploads/{id}", ApiFamily::Hf, writer,
        [&uploads](http::Request& q) { return HandleAbort(uploads, q); });
  // A part is refused from its head (not the caller's upload, no such part, wrong length)
  // before its body is read.
  r.Add(Method::Put, "/api/uploads/{id}/parts/{n}", ApiFamily::Hf,
        writer.Also([&uploads](http::Request& q) { return CheckPutPart(uploads, q); }),
        [&uploads](http::Request& q) { return HandlePutPart(uploads, q); });
  r.Add(Method::Post, "/api/uploads/{id}/complete", ApiFamily::Hf, writer,
        [&uploads](http::Request& q) { return HandleComplete(uploads, q); });
}

}  // namespace hangar::api

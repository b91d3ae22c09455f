// The basic transfer adapter's hrefs (git-lfs.md §11.5, hf-api.md §7.4): PUT uploads and
// GET downloads, authorised by the ticket in the URL, not by an Authorization header.

#include <optional>
#include <string>

#include "api/lfs/lfs_handlers.h"
#include "api/range_util.h"
#include "core/util.h"
#include "http/preconditions.h"

namespace hangar::api::lfs {

Result<Sha256> OidParam(const http::Request& req) {
  auto oid = Sha256::ParseHex(req.Param("oid"));
  if (!oid) return MakeError(ErrorCode::NotFound, "no such LFS object URL: " + req.path);
  return *oid;
}

Result<http::Response> HandleUpload(services::LfsService& lfs, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto oid, OidParam(req));
  // Any Content-Type is fine: git-lfs sniffs it from the content (git-lfs.md §11.5).
  HANGAR_TRY(lfs.Upload(req.Param("ticket"), oid, *req.body, req.ContentLength()));
  return http::Response::Json(200, "{}", kLfsMediaType);
}

Result<http::Response> HandleDownload(services::LfsService& lfs, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto oid, OidParam(req));
  const std::string etag = "\"" + oid.Hex() + "\"";
  if (auto status = http::EvaluatePreconditions(req, etag)) {
    http::Response res =
        http::Response::Text(*status, *status == 304 ? "" : "precondition failed\n");
    res.SetHeader("ETag", etag);
    return res;
  }
  bool partial = false;
  uint64_t object_size = 0;
  auto chooser = [&](uint64_t size) -> Result<storage::ByteRange> {
    object_size = size;
    return ChosenRange(req, etag, size, {}, partial);
  };
  auto dl = lfs.Download(req.Param("ticket"), oid, chooser);
  if (!dl) {
    if (dl.error().code != ErrorCode::RangeNotSatisfiable) return std::move(dl).error();
    http::Response res = http::Response::Text(416, dl.error().message + "\n");
    res.SetHeader("Content-Range", "bytes */" + std::to_string(object_size));
    res.SetHeader("Accept-Ranges", "bytes");
    return res;
  }
  http::Response res =
      http::Response::Stream(partial ? 206 : 200, std::move(dl->body), "application/octet-stream");
  res.content_length = dl->length;
  res.SetHeader("Accept-Ranges", "bytes");
  res.SetHeader("ETag", etag);
  if (partial) {
    res.SetHeader("Content-Range",
                  http::ContentRange({http::RangeAnswer::Kind::Partial, dl->offset, dl->length},
                                     dl->object_size));
  }
  return res;
}

}  // namespace hangar::api::lfs

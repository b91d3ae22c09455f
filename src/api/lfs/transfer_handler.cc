// The basic transfer adapter's hrefs (git-lfs.md §11.5, hf-api.md §7.4): PUT uploads and
// GET downloads, authorised by the ticket in the URL, not by an Authorization header.

#include <optional>
#include <string>

#include "api/lfs/lfs_handlers.h"
#include "core/util.h"

namespace hangar::api::lfs {

Result<Sha256> OidParam(const http::Request& req) {
  auto oid = Sha256::ParseHex(req.Param("oid"));
  if (!oid) return MakeError(ErrorCode::NotFound, "no such LFS object URL: " + req.path);
  return *oid;
}

namespace {

}  // namespace

Result<std::optional<storage::ByteRange>> ParseRange(std::string_view header, uint64_t size) {
  header = TrimBlanks(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size() || header.substr(0, kUnit.size()) != kUnit) {
    return std::optional<storage::ByteRange>();
  }
  std::string_view spec = TrimBlanks(header.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return std::optional<storage::ByteRange>();
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return std::optional<storage::ByteRange>();
  std::string_view first_s = TrimBlanks(spec.substr(0, dash));
  std::string_view last_s = TrimBlanks(spec.substr(dash + 1));
  Error unsatisfiable = MakeError(ErrorCode::RangeNotSatisfiable,
                                  "range " + std::string(spec) + " is outside the object (" +
                                      std::to_string(size) + " bytes)");
  if (first_s.empty()) {  // suffix: the last N bytes
    auto n = ParseUint64(last_s);
    if (!n) return std::optional<storage::ByteRange>();
    if (*n == 0 || size == 0) return unsatisfiable;
    uint64_t len = std::min(*n, size);
    return std::optional(storage::ByteRange::Window(size - len, len));
  }
  auto first = ParseUint64(first_s);
  if (!first) return std::optional<storage::ByteRange>();
  std::optional<uint64_t> last;
  if (!last_s.empty()) {
    last = ParseUint64(last_s);
    if (!last || *last < *first) return std::optional<storage::ByteRange>();
  }
  if (*first >= size) return unsatisfiable;
  uint64_t end = last ? std::min(*last, size - 1) : size - 1;
  return std::optional(storage::ByteRange::Window(*first, end - *first + 1));
}

Result<http::Response> HandleUpload(services::LfsService& lfs, http::Request& req) {
  auto oid = OidParam(req);
  if (!oid) return std::move(oid).error();
  // Any Content-Type is fine: git-lfs sniffs it from the content (git-lfs.md §11.5).
  auto ok = lfs.Upload(req.Param("ticket"), *oid, *req.body, req.ContentLength());
  if (!ok) return std::move(ok).error();
  return http::Response::Json(200, "{}", kLfsMediaType);
}

Result<http::Response> HandleDownload(services::LfsService& lfs, http::Request& req) {
  auto oid = OidParam(req);
  if (!oid) return std::move(oid).error();
  std::string_view range_header = req.Header("range");
  bool partial = false;
  uint64_t object_size = 0;
  auto chooser = [&](uint64_t size) -> Result<storage::ByteRange> {
    object_size = size;
    if (range_header.empty()) return storage::ByteRange{};
    auto r = ParseRange(range_header, size);
    if (!r) return std::move(r).error();
    if (!r->has_value()) return storage::ByteRange{};
    partial = true;
    return **r;
  };
  auto dl = lfs.Download(req.Param("ticket"), *oid, chooser);
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
  res.SetHeader("ETag", "\"" + oid->Hex() + "\"");
  if (partial) {
    res.SetHeader("Content-Range", "bytes " + std::to_string(dl->offset) + "-" +
                                       std::to_string(dl->offset + dl->length - 1) + "/" +
                                       std::to_string(dl->object_size));
  }
  return res;
}

}  // namespace hangar::api::lfs

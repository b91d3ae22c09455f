// /v2/ (end-1), blob uploads (end-4..6, 11, 13, 14) and blobs (end-2, end-10): oci.md §3.2,
// §4, §7.

#include <optional>
#include <string>

#include "api/error_render.h"
#include "api/oci/oci_handlers.h"
#include "api/range_util.h"
#include "core/util.h"
#include "http/preconditions.h"

namespace hangar::api::oci {

namespace {

std::string UploadLocation(const OciPath& p, std::string_view id) {
  return "/v2/" + p.name + "/blobs/uploads/" + std::string(id);
}

// The upload progress header (oci.md §4.4): "0-<last>", "0-0" when nothing arrived.
std::string ProgressRange(uint64_t offset) {
  return "0-" + std::to_string(offset == 0 ? 0 : offset - 1);
}

http::Response UploadAccepted(int status, const OciPath& p, const services::OciUploadState& state) {
  http::Response res = Empty(status);
  res.SetHeader("Location", UploadLocation(p, state.id));
  res.SetHeader("Range", ProgressRange(state.offset));
  res.SetHeader("Docker-Upload-UUID", state.id);
  return res;
}

http::Response BlobCreated(const OciPath& p, const std::string& digest) {
  http::Response res = Empty(201);
  res.SetHeader("Location", "/v2/" + p.name + "/blobs/" + digest);
  res.SetHeader("Docker-Content-Digest", digest);
  return res;
}

// A chunk's Content-Range, or nullopt when absent (ParseChunkRange).
Result<std::optional<services::OciChunkRange>> ChunkRange(const http::Request& req) {
  if (!req.HasHeader("content-range")) return std::optional<services::OciChunkRange>();
  HANGAR_ASSIGN_OR_RETURN(auto range, ParseChunkRange(req.Header("content-range")));
  return std::optional(range);
}

}  // namespace

Result<services::OciChunkRange> ParseChunkRange(std::string_view value) {
  std::string_view v = TrimBlanks(value);
  if (v.starts_with("bytes=") || v.starts_with("bytes ")) v.remove_prefix(6);
  size_t dash = v.find('-');
  auto first = dash == std::string_view::npos ? std::nullopt : ParseUint64(v.substr(0, dash));
  auto last = dash == std::string_view::npos ? std::nullopt : ParseUint64(v.substr(dash + 1));
  // 0-18446744073709551615 would be a chunk of 2^64 bytes, whose size wraps to 0.
  if (!first || !last || (*first == 0 && *last == UINT64_MAX)) {
    return MakeError(ErrorCode::BlobUploadInvalid, "Content-Range must be <first>-<last>, got \"" +
                                                       std::string(v.substr(0, 100)) + "\"");
  }
  return services::OciChunkRange{*first, *last};
}

http::Response HandleBase(OciDeps& d, http::Request& req) {
  // oci.md §9: the probe. No credentials: a challenge, so clients learn how to log in.
  if (!req.HasHeader("authorization")) {
    return d.auth.Unauthorized(req, "", OciAction::Pull, "authentication required");
  }
  return WithCaller(d, req, "", [](const Principal&) -> Result<http::Response> {
    return http::Response::Json(200, "{}");
  });
}

http::Response HandleUploadStart(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    auto& reg = d.registry;
    if (auto mount = req.Query("mount")) {
      HANGAR_ASSIGN_OR_RETURN(bool mounted,
                              reg.Mount(who, p.name, *mount, req.Query("from").value_or("")));
      if (mounted) return BlobCreated(p, *mount);
    } else if (auto digest = req.Query("digest")) {
      HANGAR_ASSIGN_OR_RETURN(auto stored,
                              reg.PutBlob(who, p.name, *digest, *req.body, req.ContentLength()));
      return BlobCreated(p, stored);
    }
    HANGAR_ASSIGN_OR_RETURN(
        auto state, reg.StartUpload(who, p.name, req.Query("digest-algorithm").value_or("")));
    return UploadAccepted(202, p, state);
  });
}

http::Response HandleUpload(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    auto& reg = d.registry;
    switch (req.method) {
      case http::Method::Get:
      case http::Method::Head: {
        HANGAR_ASSIGN_OR_RETURN(auto state, reg.UploadStatus(who, p.name, p.ref));
        return UploadAccepted(204, p, state);
      }
      case http::Method::Patch: {
        HANGAR_ASSIGN_OR_RETURN(auto range, ChunkRange(req));
        HANGAR_ASSIGN_OR_RETURN(auto state, reg.AppendUpload(who, p.name, p.ref, range, *req.body,
                                                             req.ContentLength()));
        return UploadAccepted(202, p, state);
      }
      case http::Method::Put: {
        auto digest = req.Query("digest");
        if (!digest) {
          return MakeError(ErrorCode::DigestInvalid,
                           "the final PUT of an upload needs ?digest=<algorithm>:<hex>");
        }
        HANGAR_ASSIGN_OR_RETURN(auto range, ChunkRange(req));
        HANGAR_ASSIGN_OR_RETURN(auto stored, reg.FinishUpload(who, p.name, p.ref, *digest, range,
                                                              *req.body, req.ContentLength()));
        return BlobCreated(p, stored);
      }
      case http::Method::Delete:
        HANGAR_TRY(reg.CancelUpload(who, p.name, p.ref));
        return Empty(204);
      default:
        return MakeError(ErrorCode::MethodNotAllowed, "unsupported method on an upload");
    }
  });
}

http::Response HandleBlob(OciDeps& d, http::Request& req, const OciPath& p) {
  return WithCaller(d, req, p.name, [&](const Principal& who) -> Result<http::Response> {
    auto& reg = d.registry;
    if (req.method == http::Method::Delete) {
      HANGAR_TRY(reg.DeleteBlob(who, p.name, p.ref));
      return Empty(202);
    }
    if (req.method == http::Method::Head) {
      HANGAR_ASSIGN_OR_RETURN(auto blob, reg.StatBlob(who, p.name, p.ref));
      http::Response res = Empty(200);
      res.content_length = blob.size;
      res.SetHeader("Content-Type", "application/octet-stream");
      res.SetHeader("Docker-Content-Digest", blob.digest);
      res.SetHeader("Accept-Ranges", "bytes");
      res.SetHeader("Etag", "\"" + blob.digest + "\"");
      return res;
    }
    const std::string etag = "\"" + p.ref + "\"";
    if (auto status = http::EvaluatePreconditions(req, etag)) {
      if (*status == 412) {
        return MakeError(ErrorCode::PreconditionFailed, "the blob is not one If-Match names");
      }
      http::Response res = Empty(304);
      res.SetHeader("Docker-Content-Digest", p.ref);
      res.SetHeader("Etag", etag);
      return res;
    }
    bool partial = false;
    uint64_t total = 0;
    auto chooser = [&](uint64_t size) -> Result<storage::ByteRange> {
      total = size;
      return ChosenRange(req, etag, size, kBlobRangePolicy, partial);
    };
    auto blob = reg.OpenBlob(who, p.name, p.ref, chooser);
    if (!blob) {
      if (blob.error().code != ErrorCode::RangeNotSatisfiable) return std::move(blob).error();
      http::Response res = RenderError(http::ApiFamily::Oci, blob.error(), req);
      res.SetHeader("Content-Range", "bytes */" + std::to_string(total));
      return res;
    }
    http::Response res = http::Response::Stream(partial ? 206 : 200, std::move(blob->body),
                                                "application/octet-stream");
    res.content_length = blob->length;
    res.SetHeader("Docker-Content-Digest", blob->digest);
    res.SetHeader("Accept-Ranges", "bytes");
    res.SetHeader("Etag", "\"" + blob->digest + "\"");
    if (partial) {
      res.SetHeader("Content-Range", http::ContentRange({http::RangeAnswer::Kind::Partial,
                                                         blob->offset, blob->length},
                                                        blob->size));
    }
    return res;
  });
}

}  // namespace hangar::api::oci

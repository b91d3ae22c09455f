#pragma once
// Handlers of the LFS routes (lfs_routes.h); internal to api/lfs/.

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/repo_id.h"
#include "core/result.h"
#include "http/request.h"
#include "http/response.h"
#include "services/lfs/lfs_service.h"
#include "storage/byte_range.h"

namespace hangar::api::lfs {

// The LFS media type of API requests and responses (git-lfs.md §11.2).
inline constexpr std::string_view kLfsMediaType = "application/vnd.git-lfs+json";
// Path prefix of the transfer hrefs; the routes in lfs_routes.cc must agree.
inline constexpr std::string_view kUploadPath = "/lfs-objects/upload/";
inline constexpr std::string_view kDownloadPath = "/lfs-objects/download/";
// Multipart hrefs: kMultipartPath + "{ticket}/{oid}/{upload}/part/{n}" and ".../complete".
inline constexpr std::string_view kMultipartPath = "/lfs-multipart/";

// The object id segment ("oid" param) of a transfer URL. Errors: NotFound (no such object
// URL).
Result<Sha256> OidParam(const http::Request& req);

// The repo a /P{ns}/{name}/info/lfs/... route names: params "ns" and "name" (".git"
// stripped) under `type`. Errors: BadRequest for an invalid name.
Result<RepoId> RepoFromParams(const http::Request& req, RepoType type);

// Decodes a batch request body (git-lfs.md §11.4 request fields): operation, transfers,
// ref.name, hash_algo, objects[].oid/size (oids are not checked here).
// Errors: Unprocessable naming the field.
Result<services::LfsBatchRequest> ParseBatch(const boost::json::object& body);
// POST .../info/lfs/objects/batch. Errors: PayloadTooLarge,
// Unprocessable (malformed JSON or fields), and LfsService::Batch's.
Result<http::Response> HandleBatch(services::LfsService& lfs, http::Request& req, RepoType type,
                                   int64_t max_body_bytes);
// POST .../info/lfs/objects/verify with {"oid","size"}; authorised by ?ticket= when present,
// else by the caller's credentials. 200 {} when linked with that size.
Result<http::Response> HandleVerify(services::LfsService& lfs, http::Request& req, RepoType type,
                                    int64_t max_body_bytes);
// Any .../info/lfs/locks route: NotFound "locking not supported" so git-lfs carries on
// (git-lfs.md §11.6).
Result<http::Response> HandleLocks(http::Request& req);

// PUT /lfs-objects/upload/{ticket}/{oid}: 200 {} once the object is stored and linked.
Result<http::Response> HandleUpload(services::LfsService& lfs, http::Request& req);
// GET|HEAD /lfs-objects/download/{ticket}/{oid}: 200 or 206 with the bytes, 416.
Result<http::Response> HandleDownload(services::LfsService& lfs, http::Request& req);

// PUT /lfs-multipart/{ticket}/{oid}/{upload}/part/{part}: 200 with an ETag once the part is stored
// (hf-api.md §7.4). Errors: LfsService::UploadPart's.
Result<http::Response> HandlePartUpload(services::LfsService& lfs, http::Request& req);
// POST /lfs-multipart/{ticket}/{oid}/{upload}/complete with {"oid", "parts": [{"partNumber",
// "etag"}]}: 200 {} once the object is assembled, verified and linked. Errors:
// PayloadTooLarge, Unprocessable (malformed body), LfsService::CompleteMultipart's.
Result<http::Response> HandleMultipartComplete(services::LfsService& lfs, http::Request& req,
                                               int64_t max_body_bytes);

}  // namespace hangar::api::lfs

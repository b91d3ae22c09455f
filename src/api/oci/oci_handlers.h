#pragma once
// The registry's HTTP side (oci.md §1.5–§8): a /v2/ path parsed from the right into the
// resource it names, and one handler per resource and method. Handlers parse headers and
// query parameters, call one services::OciService function and render its answer; they
// hold no registry rules. blob_handlers.cc: base, uploads, blobs; manifest_handlers.cc:
// manifests, tags, referrers, catalog.

#include <optional>
#include <string>
#include <string_view>

#include "api/oci/oci_auth.h"
#include "core/result.h"
#include "http/range.h"
#include "http/request.h"
#include "http/response.h"
#include "services/oci/oci_service.h"

namespace hangar::api::oci {

// What a path under /v2/ addresses (oci.md §1.5).
enum class OciResource {
  Base,         // /v2/
  Catalog,      // /v2/_catalog
  UploadStart,  // /v2/<name>/blobs/uploads/
  Upload,       // /v2/<name>/blobs/uploads/<id>
  Blob,         // /v2/<name>/blobs/<digest>
  Manifest,     // /v2/<name>/manifests/<reference>
  Tags,         // /v2/<name>/tags/list
  Referrers,    // /v2/<name>/referrers/<digest>
  Unknown,
};

struct OciPath {
  OciResource kind = OciResource::Unknown;
  std::string name;  // the repository name (not validated here)
  std::string ref;   // upload id, digest or reference; "" otherwise
};

// Splits the percent-decoded part after "/v2/" by its suffix, from the right.
OciPath ParseOciPath(std::string_view rest);

// What the handlers need. Lives as long as the router.
struct OciDeps {
  services::OciService& registry;
  const OciAuth& auth;
};

// Every handler answers with a response (errors rendered in the OCI shape, 401s with a
// challenge); the route adds Docker-Distribution-API-Version.
http::Response HandleBase(OciDeps& d, http::Request& req);
http::Response HandleUploadStart(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleUpload(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleBlob(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleManifest(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleTags(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleReferrers(OciDeps& d, http::Request& req, const OciPath& p);
http::Response HandleCatalog(OciDeps& d, http::Request& req);

// A chunk's Content-Range value "<first>-<last>" (oci.md §2.1; a "bytes " or "bytes="
// prefix is tolerated). Errors: BlobUploadInvalid for a malformed value or one whose size
// does not fit in 64 bits (0-18446744073709551615). last < first is the service's to refuse.
Result<services::OciChunkRange> ParseChunkRange(std::string_view value);
// How a blob GET treats Range (oci.md §3.2 table): as every family, but end < start is 416.
inline constexpr http::RangePolicy kBlobRangePolicy{true};

// ---- shared by the handler files ----
// The action a request method performs (GET/HEAD pull, DELETE delete, others push).
OciAction ActionOf(const http::Request& req);
// The registry routes' own check (http::Requirement::Registry), from the head before any
// body byte is read (oci.md §9): the caller's credentials must hold for the repository and
// action the path names (sets req.principal); a pull needs read on that repository, a
// delete write, and a push (every request that carries a body) write or the right to
// create it (OciService::CheckPush). nullopt admits; else the refusal (404 for no registry
// resource, 401 with a challenge, or the OCI error).
std::optional<http::Response> AdmitCaller(OciDeps& d, http::Request& req);
// Runs `fn(req.principal)` (the caller AdmitCaller resolved for `name`); renders its error:
// a 401 with a challenge for anonymous callers refused (Unauthorized, or RepoNotFound that
// credentials might change), the OCI error shape otherwise.
http::Response WithCaller(OciDeps& d, http::Request& req, std::string_view name,
                          const std::function<Result<http::Response>(const Principal&)>& fn);
// An empty response with `status` (Content-Length: 0).
http::Response Empty(int status);

}  // namespace hangar::api::oci

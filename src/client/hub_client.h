#pragma once
// HubClient: the HTTP calls `hangar upload` and `hangar download` make to a hub — the
// HF-compatible JSON API (docs/api.md: repo create, revision info, tree listing, preupload,
// NDJSON commit, /resolve) and the native upload API (docs/uploads.md). Knows nothing of
// files on disk or of the command line; uploader.h and downloader.h drive it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"
#include "net/http_client.h"

namespace hangar::client {

// Which repo: type and "namespace/name".
struct RepoRef {
  std::string type = "model";  // model | dataset | space
  std::string ns, name;

  // Errors: BadRequest for an unknown type or an id that is not "namespace/name".
  static Result<RepoRef> Parse(std::string_view type, std::string_view id);
  std::string Id() const { return ns + "/" + name; }
  // "/api/models/ns/name"
  std::string ApiPath() const;
  // "ns/name", "datasets/ns/name" or "spaces/ns/name": the prefix of web and file URLs.
  std::string UrlPath() const;
};

// A file in a listed tree (tree entries of type "file").
struct TreeFile {
  std::string path;
  uint64_t size = 0;       // the file's bytes (the LFS object's size for LFS files)
  std::string oid;         // git blob oid, 40 hex
  std::string lfs_sha256;  // 64 hex for LFS files, else empty
};

// A file as preupload sees it.
struct PreuploadFile {
  std::string path;
  uint64_t size = 0;
  std::string sample;  // the first bytes (up to 512), raw
};

// An open native upload (docs/uploads.md "Create (or resume)").
struct UploadSession {
  bool present = false;  // the repo already has the object: nothing to send
  std::string id;
  uint64_t size = 0;
  uint64_t part_size = 0;
  uint64_t part_count = 0;
  std::vector<uint64_t> stored_parts;  // part numbers the server already holds
  std::vector<std::string> part_urls;  // part_urls[i] is part i + 1
  // Size of part `number` (1-based).
  uint64_t PartBytes(uint64_t number) const;
};

// One line of a commit.
struct CommitOp {
  bool lfs = false;
  std::string path;
  std::string content;  // regular files: the bytes
  std::string sha256;   // LFS files: the object
  uint64_t size = 0;    // LFS files
};

// Stateless apart from the endpoint and token: every call uses the calling thread's own
// net::HttpClient (kept alive per thread), so one HubClient is shared by many workers.
class HubClient {
 public:
  // `endpoint`: "http://host:port" (a trailing '/' is dropped); `token`: may be empty.
  HubClient(std::string endpoint, std::string token);

  const std::string& endpoint() const { return endpoint_; }

  // POST /api/repos/create; an existing repo (409) is fine.
  Result<void> CreateRepo(const RepoRef& repo) const;
  // POST .../branch/{branch} from the default branch; an existing branch (409) is fine.
  Result<void> CreateBranch(const RepoRef& repo, std::string_view branch) const;
  // The commit sha `revision` names (GET .../revision/{rev}).
  Result<std::string> ResolveCommit(const RepoRef& repo, std::string_view revision) const;
  // Every file under `commit`, recursively, all Link pages followed.
  Result<std::vector<TreeFile>> ListFiles(const RepoRef& repo, std::string_view commit) const;
  // For each file (same order): true when it must go as LFS; shouldIgnore files come back
  // as nullopt.
  Result<std::vector<std::optional<bool>>> Preupload(const RepoRef& repo, std::string_view revision,
                                                     const std::vector<PreuploadFile>& files) const;
  // POST .../uploads: create or resume. `part_size_hint` 0 = the server's default.
  Result<UploadSession> CreateUpload(const RepoRef& repo, std::string_view sha256, uint64_t size,
                                     uint64_t part_size_hint) const;
  // PUT one part, streamed from `body` (which knows its size), with X-Part-Sha256.
  Result<void> PutPart(const UploadSession& s, uint64_t number, ByteSource& body,
                       std::string_view part_sha256) const;
  // POST /api/uploads/{id}/complete.
  Result<void> CompleteUpload(const UploadSession& s) const;
  // POST .../commit/{branch}; returns the commit URL.
  Result<std::string> Commit(const RepoRef& repo, std::string_view branch, std::string_view summary,
                             const std::vector<CommitOp>& ops) const;
  // GET /resolve/{commit}/{path}, bytes [offset, offset + length) (length 0: the whole
  // file) handed to `sink`. Fails unless the answer is 200 (whole file) or 206 (a range).
  // On failure the sink may have seen an error body: callers discard what it wrote.
  Result<void> GetFile(const RepoRef& repo, std::string_view commit, std::string_view path,
                       uint64_t offset, uint64_t length, const net::BodySink& sink) const;

 private:
  // Sends `req` with the token (for URLs of this hub); non-2xx becomes an Error naming
  // `what`, the status and the server's X-Error-Message.
  Result<net::HttpResponse> Call(net::HttpRequest req, std::string_view what,
                                 const net::BodySink* sink = nullptr) const;
  void Authorize(net::HttpRequest& req) const;

  std::string endpoint_;
  std::string token_;
};

// The Error for a non-2xx answer: code from X-Error-Code (else from the status), message
// "<what>: HTTP <status> <X-Error-Code>: <X-Error-Message or body>".
Error HttpError(const net::HttpResponse& res, std::string_view what);

// Whether a failed call may succeed when repeated: transport errors and 5xx.
bool Retryable(const Error& e);

}  // namespace hangar::client

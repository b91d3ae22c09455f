#pragma once
// LfsService: the rules of the Git LFS server (git-lfs.md §11, hf-api.md §7.3, §7.4 basic
// and verify, §10.2): who may upload or download which object of which repo, the batch
// answer, and the self-authorising transfers (tickets, services/auth/ticket.h) that stream
// objects into and out of the sha256 blob store and link them to repos (db::LfsStore).
// No HTTP here: api/lfs/ parses requests, builds hrefs and renders JSON.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/sha256.h"
#include "db/lfs_store.h"
#include "services/auth/ticket.h"
#include "services/lfs/missing_blobs.h"
#include "services/repo/repo_service.h"
#include "services/uploads/upload_service.h"
#include "storage/blob_store.h"
#include "storage/byte_range.h"

namespace hangar::services {

// The configured fields have no defaults of their own: config.h is their one source, and
// cli's LfsOptionsFrom copies them (a test gives its own).
struct LfsServiceOptions {
  // Lifetime of transfer tickets (config auth.ticket_ttl_s).
  std::chrono::seconds ticket_ttl{0};
  size_t max_objects = 0;  // objects per batch, at least 1 (config limits.max_lfs_batch_objects)
  uint64_t max_object_bytes = 0;  // largest object accepted, bytes; 0 = no limit
                                  // (config limits.max_upload_bytes)
  std::function<int64_t()> now;   // clock, unix seconds; empty = NowUnix. Tests inject it.
  // Download hrefs point at the blob store's presigned URLs (valid for ticket_ttl) when it
  // has them (config storage.download_mode = "redirect").
  bool download_redirect = false;
  // HF multipart transfer (hf-api.md §7.4): uploads of at least `multipart_threshold`
  // bytes, from clients that list "multipart" in `transfers`, are sent in parts of
  // `multipart_chunk_bytes` (config limits.multipart_threshold_bytes and
  // limits.multipart_chunk_bytes). Each is an upload of UploadService's (a row and a
  // blob store staging area, so on S3 its parts are S3 parts); a threshold of 0 turns
  // multipart off.
  uint64_t multipart_threshold = 0;
  uint64_t multipart_chunk_bytes = 0;
};

// At most this many parts per multipart upload (S3's limit too): larger objects get
// bigger parts than LfsServiceOptions::multipart_chunk_bytes.
inline constexpr uint64_t kMaxMultipartParts = 10000;

// One entry of a multipart completion body: {"partNumber": n, "etag": "<ETag as sent>"}.
struct LfsPartRef {
  uint64_t number = 0;  // 1-based
  std::string etag;     // the ETag header of that part's PUT answer, quotes allowed
};

enum class LfsOperation { Upload, Download };

// One object of a batch request, as the client sent it.
struct LfsBatchObject {
  std::string oid;   // expected: 64 lower-case hex; anything else gets a per-object 422
  int64_t size = 0;  // bytes; negative gets a per-object 422
};

// A batch request (git-lfs.md §11.4), already decoded from JSON by the handler.
struct LfsBatchRequest {
  LfsOperation operation = LfsOperation::Download;
  std::vector<std::string> transfers;  // adapters offered; empty means ["basic"]
  std::optional<std::string> ref;      // "refs/heads/main", "main", or absent
  std::vector<LfsBatchObject> objects;
  std::optional<std::string> hash_algo;  // absent, "sha256" or "sha_256" accepted
};

// The answer for one object: an error, or a ticket for the action, or neither (an upload
// the repo already has: the client skips it).
struct LfsBatchObjectResult {
  std::string oid;   // echoed
  int64_t size = 0;  // echoed
  struct ObjectError {
    int code = 0;  // HTTP-like: 404 missing, 422 invalid (git-lfs.md §11.4)
    std::string message;
  };
  std::optional<ObjectError> error;
  // Set when the client must act: the credential for the upload (and verify) or download
  // href; the handler puts it in the URL. Valid for LfsBatchResult::expires_in seconds.
  std::optional<std::string> ticket;
  // Non-zero for a multipart upload (hf-api.md §7.4): the part size; the object has
  // ceil(size / chunk_size) parts, all authorised by `ticket`, staged in upload
  // `upload_id` (db::UploadRecord::id; the handler puts it in the part URLs).
  uint64_t chunk_size = 0;
  std::string upload_id;
  // Download with LfsServiceOptions::download_redirect and a store that presigns: the
  // object store URL to use as the download href instead of Hangar's (no header needed).
  std::optional<std::string> download_url;
};

struct LfsBatchResult {
  LfsOperation operation = LfsOperation::Download;
  std::string transfer = "basic";             // "multipart" when some object has chunk_size set
  int64_t expires_in = 0;                     // seconds the tickets stay valid
  std::vector<LfsBatchObjectResult> objects;  // one per request object, in order
};

// An object being downloaded: `body` streams the chosen window of the object.
struct LfsDownload {
  std::unique_ptr<ByteSource> body;  // Size() is the window's length
  uint64_t object_size = 0;          // the whole object's size, bytes
  uint64_t offset = 0;               // first byte of the window
  uint64_t length = 0;               // bytes in the window
};

// Chooses which bytes to send once the object's size is known (the handler's Range logic).
// Returns the window, or an error (e.g. RangeNotSatisfiable) that Download passes through.
using LfsRangeChooser = std::function<Result<storage::ByteRange>(uint64_t object_size)>;

// Thread-safe (holds only references and the key); one per process. Calls block on the
// database and the blob store: run them on the worker pool.
class LfsService {
 public:
  // `key` is the server secret (raw bytes) tickets are signed with; must not be empty.
  // `uploads` stages multipart transfers. The references must outlive the service.
  LfsService(RepoService& repos, db::LfsStore& links, storage::BlobStore& blobs,
             UploadService& uploads, std::string key, LfsServiceOptions options = {});

  // Where objects a repo links but the store lacks come from (a pull-through cache's
  // repos, docs/upstream.md): a download of such an object is answered as if present and
  // the object brought when its bytes are asked for. Set before serving; null: none.
  void SetMissingBlobs(MissingBlobs* missing) { missing_ = missing; }

  // Answers a batch request for `repo` (git-lfs.md §11.4, hf-api.md §7.3). Upload needs
  // Write access, download Read. Per object: bad oid, negative size or size over the limit
  // → error 422; upload of an object already linked to the repo with that size → no action;
  // other uploads → an upload ticket; download of an object linked to the repo and present
  // in the blob store → a download ticket, else error 404 "Object does not exist".
  // Errors (whole request): Unauthorized for anonymous callers without access (so git-lfs
  // asks for credentials; also when the repo does not exist, revealing nothing);
  // RepoNotFound for signed-in callers who cannot see it; Forbidden for read-only callers
  // uploading; Unprocessable for no objects or an unknown hash_algo; PayloadTooLarge for more
  // than max_objects objects; Internal.
  Result<LfsBatchResult> Batch(const Principal& who, const RepoId& repo,
                               const LfsBatchRequest& request);

  // Basic-transfer upload (git-lfs.md §11.5, hf-api.md §7.4): checks `ticket` (an upload
  // ticket for `oid`), streams `body` into the blob store verifying size and sha256, and
  // links the object to the ticket's repo. The object is final when this returns.
  // `content_length` is the request's Content-Length when it had one.
  // Errors: Forbidden (bad, expired or tampered ticket, or one for another object or
  // operation: never 401, see CheckTicket), SizeInvalid (Content-Length or body length differs from
  // the announced size), DigestInvalid (bytes do not hash to `oid`), BadRequest (body cut short),
  // RepoNotFound (repo deleted since), Internal. On any error nothing becomes visible.
  Result<void> Upload(std::string_view ticket, const Sha256& oid, ByteSource& body,
                      std::optional<uint64_t> content_length);

  // Multipart part upload (hf-api.md §7.4; lfs_multipart.cc): checks `ticket` (an upload
  // ticket for `oid`) and that `upload` is the object's staged upload in the ticket's
  // repo, then stores `body` as part `part` (1-based; exactly that part's length) in the
  // upload's staging area, replacing an earlier copy of it. Returns the part's ETag
  // header value (the store's tag, quoted). Parts may arrive in any order and
  // concurrently. Errors: Forbidden (ticket), NotFound (no such upload, expired, complete,
  // or no such part number), SizeInvalid (wrong length), BadRequest (body cut short),
  // Internal (I/O).
  Result<std::string> UploadPart(std::string_view ticket, const Sha256& oid,
                                 const std::string& upload, uint64_t part, ByteSource& body,
                                 std::optional<uint64_t> content_length);

  // UploadPart's checks that need no body, for the router to run from the request head.
  // Returns the ticket's claims. Errors: as UploadPart's but for the body's.
  Result<TicketClaims> CheckPart(std::string_view ticket, const Sha256& oid,
                                 const std::string& upload, uint64_t part,
                                 std::optional<uint64_t> content_length);

  // Multipart completion: checks `ticket` and `upload` as UploadPart, that `parts` names
  // every part 1..N once with the ETag its PUT answered, then joins the staged parts
  // (verifying sha256 and size), links the object to the repo and marks the upload
  // complete; completing it again succeeds. Errors: Forbidden (ticket), NotFound (no such
  // upload), BadRequest (part missing, not uploaded, or ETag mismatch: the parts are kept
  // so the client can resend), DigestInvalid / SizeInvalid (the assembled bytes are not
  // `oid`: nothing becomes visible and the parts are discarded), Internal.
  Result<void> CompleteMultipart(std::string_view ticket, const Sha256& oid,
                                 const std::string& upload, const std::vector<LfsPartRef>& parts);

  // Verify action (git-lfs.md §11.5) authorised by the caller: needs Read on `repo`.
  // Succeeds when the repo links `oid` with `size` bytes. Errors: as Batch's access errors;
  // NotFound when not linked; Unprocessable when linked with another size.
  Result<void> Verify(const Principal& who, const RepoId& repo, const Sha256& oid, int64_t size);
  // Verify action authorised by the upload ticket from the batch answer (the repo is the
  // ticket's). Errors: Forbidden (bad ticket or other object), NotFound, Unprocessable.
  Result<void> VerifyWithTicket(std::string_view ticket, const Sha256& oid, int64_t size);

  // Basic-transfer download: checks `ticket` (a download ticket for `oid`), that the object
  // is still linked to the ticket's repo, asks `choose` for the window given the object's
  // size, and opens it. Errors: Forbidden (bad ticket), NotFound (unlinked or missing from
  // the store), whatever `choose` returns, Internal.
  Result<LfsDownload> Download(std::string_view ticket, const Sha256& oid,
                               const LfsRangeChooser& choose);

  // The claims of `ticket` when it is valid and grants `op` (on `oid` in the second form).
  // Also the router's check of the transfer routes, from the request head before the body
  // is read. Errors: Forbidden (malformed, tampered, expired, another operation or object;
  // never 401: see the definition).
  Result<TicketClaims> CheckTicket(std::string_view ticket, TicketOp op) const;
  Result<TicketClaims> CheckTicket(std::string_view ticket, const Sha256& oid, TicketOp op) const;

  // The size of `oid` when repo `repo_id` links it, else nullopt (for other services, e.g.
  // commit and resolve paths checking LFS pointers). Errors: Internal.
  Result<std::optional<uint64_t>> LinkedSize(int64_t repo_id, const Sha256& oid);

 private:
  int64_t Now() const;
  Result<RepoHandle> OpenRepo(const Principal& who, const RepoId& repo, Access needed);
  Result<void> CheckLinked(int64_t repo_id, const Sha256& oid, int64_t size);
  // The per-object error (422) of a batch object whose oid is not valid hex, whose size is
  // negative, or which is an upload over the size limit; nullopt when it may go on.
  std::optional<LfsBatchObjectResult::ObjectError> InvalidObject(LfsOperation op, bool oid_valid,
                                                                 int64_t size) const;
  // One object's answer; an error here (database, store) fails the whole batch.
  Result<LfsBatchObjectResult> AnswerObject(const Principal& who, const RepoHandle& repo,
                                            LfsOperation op, const LfsBatchObject& obj,
                                            int64_t expires_at, bool multipart_offered);
  // Completes `r`, an upload's answer with its ticket: multipart (a staged upload begun
  // or resumed, lfs_multipart.cc) when offered and the object is large enough, else
  // basic; a 429 object error when the user has too many uploads open. Errors: Internal.
  Result<void> AnswerUpload(const Principal& who, const RepoHandle& repo, const Sha256& oid,
                            bool multipart_offered, LfsBatchObjectResult& r);
  // The part size of a multipart upload of `size` bytes (lfs_multipart.cc).
  uint64_t ChunkSizeFor(uint64_t size) const;
  // The staged upload `upload` of the object a valid upload `ticket` for `oid` names,
  // with the ticket's claims. Errors: Forbidden (ticket), NotFound, Internal.
  Result<std::pair<TicketClaims, db::UploadRecord>> StagedUpload(std::string_view ticket,
                                                                 const Sha256& oid,
                                                                 const std::string& upload);

  RepoService& repos_;
  db::LfsStore& links_;
  storage::BlobStore& blobs_;
  UploadService& uploads_;
  std::string key_;
  LfsServiceOptions options_;
  MissingBlobs* missing_ = nullptr;
};

}  // namespace hangar::services

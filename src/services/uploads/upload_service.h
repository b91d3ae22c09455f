#pragma once
// UploadService: the rules of the native upload API (docs/uploads.md; issue #3 point 5):
// who may start, feed, look at, complete or abort a multipart upload, how big its parts
// are, when it expires, and linking the verified object to its repo. Parts live in the
// blob store's staging areas (BlobStore::BeginParts ..), uploads in db::UploadStore.
// No HTTP here: api/hf/upload_handlers.cc parses and renders.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_source.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/sha256.h"
#include "db/lfs_store.h"
#include "db/upload_store.h"
#include "services/repo/repo_service.h"
#include "storage/blob_store.h"

namespace hangar::services {

// The configured fields have no defaults of their own: config.h is their one source, and
// cli's UploadOptionsFrom copies them (a test gives its own).
struct UploadServiceOptions {
  uint64_t default_part_bytes = 0;  // config limits.upload_part_bytes (clamped to S3's sizes)
  uint64_t max_object_bytes = 0;    // limits.max_upload_bytes; 0 = none
  std::chrono::seconds expiry{0};   // limits.upload_expiry_s
  // Presigned part URLs (storage.upload_mode = direct) stay valid this long
  // (storage.s3_url_ttl_s).
  std::chrono::seconds part_url_ttl{0};
  bool direct_parts = false;      // storage.upload_mode == direct
  int64_t max_open_per_user = 0;  // limits.max_open_uploads; 0 = none
  std::function<int64_t()> now;   // unix seconds; empty = NowUnix
};

// Part sizes are clamped to S3's limits, and raised so no upload has more parts.
inline constexpr uint64_t kMinUploadPartBytes = uint64_t{5} << 20;  // 5 MiB
inline constexpr uint64_t kMaxUploadPartBytes = uint64_t{5} << 30;  // 5 GiB
inline constexpr uint64_t kMaxUploadParts = 10000;
inline constexpr uint64_t kMaxUploadBytes = uint64_t{5} << 40;  // 5 TiB, S3's object limit

// An upload as the API shows it.
struct UploadView {
  db::UploadRecord record;
  bool complete = false;
  std::vector<storage::PartInfo> parts;  // stored so far (empty once complete)
  // Presigned URL per part (index n-1) in direct mode; empty when parts go through Hangar.
  std::vector<std::string> part_urls;
};

// The answer to a create call.
struct UploadStart {
  bool present = false;  // the repo already links the object: nothing to upload
  bool resumed = false;  // an open upload of the same object was found and returned
  UploadView upload;     // unset when `present`
};

// Thread-safe; one per process. Calls block on the database and the blob store.
class UploadService {
 public:
  UploadService(RepoService& repos, db::RepoStore& repo_rows, db::UploadStore& uploads,
                db::LfsStore& links, storage::BlobStore& blobs, UploadServiceOptions options);

  // Starts (or resumes) an upload of `size` bytes hashing to `sha256` into `repo`, with
  // parts of about `part_size_hint` bytes. Errors: as RepoService::Open with Write;
  // BadRequest (negative size), PayloadTooLarge (over max_object_bytes or 5 TiB),
  // TooManyRequests (the user has max_open_per_user uploads open already), Internal.
  // An object the repo links but the store lost counts as absent (a new upload repairs it).
  Result<UploadStart> Create(const Principal& who, const RepoId& repo, const Sha256& sha256,
                             int64_t size, std::optional<uint64_t> part_size_hint);

  // The upload `id` of `who`. Errors: Unauthorized (anonymous), NotFound (unknown,
  // expired, or another user's), Internal.
  Result<UploadView> Get(const Principal& who, const std::string& id);

  // Whether `who` may send part `number` of upload `id`, `content_length` bytes long (when
  // known): all PutPart checks before the body, for the router to run from the request
  // head. Errors: as PutPart, but for the body's.
  Result<void> CheckPart(const Principal& who, const std::string& id, uint64_t number,
                         std::optional<uint64_t> content_length);

  // Stores part `number` from `body`; `content_length` is the request's, when it had one.
  // Refreshes the expiry. Errors: as Get; NotFound (completed, or no such part number);
  // SizeInvalid (wrong length); DigestInvalid (not `part_sha256`); BadRequest (body cut
  // short); Internal.
  Result<storage::PartInfo> PutPart(const Principal& who, const std::string& id, uint64_t number,
                                    ByteSource& body, std::optional<uint64_t> content_length,
                                    std::optional<Sha256> part_sha256);

  // Joins and verifies the parts, publishes the blob and links it to the repo. Completing
  // a completed upload answers the same. Errors: as Get; Forbidden/RepoNotFound when `who`
  // lost write access; Conflict (parts missing, named); DigestInvalid / SizeInvalid (the
  // upload is discarded); Internal.
  Result<UploadView> Complete(const Principal& who, const std::string& id);

  // Discards the upload and its parts. Errors: as Get.
  Result<void> Abort(const Principal& who, const std::string& id);

  // GC: removes uploads whose expiry is past (their staging areas and rows), at most
  // `limit`; returns how many. With `dry_run` only counts. Errors: Internal.
  Result<size_t> RemoveExpired(bool dry_run, int limit = 1000);

  // Whether staging area `handle` belongs to an upload row (GC keeps those).
  Result<bool> IsKnownStaging(const std::string& handle);

  // ---- Staging for a transfer whose callers hold another credential ----
  // LFS multipart (services/lfs/lfs_multipart.cc): its part and completion URLs carry a
  // ticket that LfsService checks, so these take the upload's identity (repo row, object)
  // instead of a Principal and check no access. The parts live where every other
  // upload's do: a blob store staging area named by an uploads row.

  // The open upload of `sha256` (`size` bytes, at least 1) into repo row `repo_id` by
  // `user_id`: resumed when one is open with its staging area (its part size then stays),
  // else begun with parts of exactly `part_size` bytes (the caller's choice, not clamped:
  // on S3 every part but the last must be at least kMinUploadPartBytes). `resumed` tells
  // which. Errors: TooManyRequests (the user has max_open_per_user open), Internal.
  Result<db::UploadRecord> Begin(int64_t repo_id, int64_t user_id, const Sha256& sha256,
                                 uint64_t size, uint64_t part_size, bool* resumed = nullptr);

  // Upload `id` when it is the upload of `sha256` (`size` bytes) into repo row `repo_id`,
  // completed or open (and then not expired). Errors: NotFound, Internal.
  Result<db::UploadRecord> Lookup(const std::string& id, int64_t repo_id, const Sha256& sha256,
                                  uint64_t size);

  // As CheckPart and PutPart, on an upload from Begin or Lookup.
  Result<void> CheckPartOf(const db::UploadRecord& upload, uint64_t number,
                           std::optional<uint64_t> content_length);
  Result<storage::PartInfo> PutPartOf(const db::UploadRecord& upload, uint64_t number,
                                      ByteSource& body, std::optional<uint64_t> content_length,
                                      std::optional<Sha256> part_sha256);

  // The parts of `upload` stored so far, by number (empty once it is complete).
  // Errors: NotFound (its staging area is gone), Internal.
  Result<std::vector<storage::PartInfo>> PartsOf(const db::UploadRecord& upload);

  // Joins and verifies the parts of `upload`, publishes the blob, links it to the repo
  // and marks the upload completed (`upload` is updated). A completed upload is left as
  // it is. Errors: Conflict (parts missing, named); DigestInvalid / SizeInvalid (the
  // upload and its parts are discarded); Internal.
  Result<void> CompleteOf(db::UploadRecord& upload);

 private:
  int64_t Now() const;
  uint64_t PartSizeFor(uint64_t size, std::optional<uint64_t> hint) const;
  Result<db::UploadRecord> Find(const Principal& who, const std::string& id);
  Result<UploadView> View(db::UploadRecord record);

  RepoService& repos_;
  db::RepoStore& repo_rows_;
  db::UploadStore& uploads_;
  db::LfsStore& links_;
  storage::BlobStore& blobs_;
  UploadServiceOptions options_;
  // Held from counting a user's open uploads to inserting the new one, so concurrent
  // creates cannot pass max_open_per_user together (within this process).
  std::mutex begin_mu_;
};

}  // namespace hangar::services

#pragma once
// UploadStore: the uploads table — multipart uploads in flight (docs/uploads.md), each
// naming the blob store staging area that holds its parts. Interface only;
// SqlUploadStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::db {

struct UploadRecord {
  std::string id;                       // 32 lower-case hex; also the blob store's staging key
  int64_t repo_id = 0;                  // the repo the object is for
  int64_t user_id = 0;                  // who created it: only they may add parts or complete it
  Sha256 sha256;                        // the announced object
  uint64_t size = 0;                    // bytes
  uint64_t part_size = 0;               // bytes per part (the last may be shorter)
  std::string store_handle;             // BlobStore::BeginParts's handle
  int64_t created_at = 0;               // unix seconds
  int64_t expires_at = 0;               // unix seconds; GC removes it after this
  std::optional<int64_t> completed_at;  // unix seconds, once the blob is published

  uint64_t PartCount() const { return part_size ? (size + part_size - 1) / part_size : 0; }
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class UploadStore {
 public:
  virtual ~UploadStore() = default;

  // Records a new upload. Errors: Conflict when the id exists; RepoNotFound when the repo
  // row does not.
  virtual Result<void> Create(const UploadRecord& upload) = 0;
  // The upload with `id`, or nullopt.
  virtual Result<std::optional<UploadRecord>> Get(const std::string& id) = 0;
  // The newest upload of (`repo_id`, `user_id`, `sha256`, `size`) neither completed nor
  // expired at `now`, or nullopt: what a client resumes.
  virtual Result<std::optional<UploadRecord>> FindOpen(int64_t repo_id, int64_t user_id,
                                                       const Sha256& sha256, uint64_t size,
                                                       int64_t now) = 0;
  // How many uploads of `user_id` are neither completed nor expired at `now`.
  virtual Result<int64_t> CountOpen(int64_t user_id, int64_t now) = 0;
  // Moves the expiry of `id` to `expires_at` (unix seconds); a missing id is a no-op.
  virtual Result<void> SetExpiry(const std::string& id, int64_t expires_at) = 0;
  // Marks `id` completed at `when` and moves its expiry to `expires_at`.
  virtual Result<void> MarkCompleted(const std::string& id, int64_t when, int64_t expires_at) = 0;
  // Removes the row; a missing id is a no-op.
  virtual Result<void> Delete(const std::string& id) = 0;
  // Uploads whose expiry is before `now`, oldest first, at most `limit`.
  virtual Result<std::vector<UploadRecord>> ListExpired(int64_t now, int limit) = 0;
};

}  // namespace hangar::db

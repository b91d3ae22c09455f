#pragma once
// LfsStore: the link table saying which repo references which stored blob (LFS object or
// OCI blob). A blob is readable through a repo only when linked to it (DESIGN.md §Data dir).
// Interface only; SqlLfsStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::db {

struct LfsLink {
  Sha256 oid;
  uint64_t size = 0;  // bytes
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class LfsStore {
 public:
  virtual ~LfsStore() = default;

  // Links `oid` (of `size` bytes) to the repo; linking again is a no-op that keeps one row.
  // Errors: RepoNotFound when the repo row does not exist.
  virtual Result<void> Link(int64_t repo_id, const Sha256& oid, uint64_t size) = 0;
  // The linked object's size, or nullopt when the repo does not reference it.
  virtual Result<std::optional<uint64_t>> IsLinked(int64_t repo_id, const Sha256& oid) = 0;
  // Removes the link; removing a missing link is a no-op.
  virtual Result<void> Unlink(int64_t repo_id, const Sha256& oid) = 0;
  // Links of the repo in oid order, starting after `after` (none = from the start), at most
  // `limit` of them.
  virtual Result<std::vector<LfsLink>> ListForRepo(int64_t repo_id,
                                                   std::optional<Sha256> after = std::nullopt,
                                                   int limit = 1000) = 0;
  // How many repos reference `oid` (0 means garbage-collectable).
  virtual Result<int64_t> CountLinks(const Sha256& oid) = 0;
};

}  // namespace hangar::db

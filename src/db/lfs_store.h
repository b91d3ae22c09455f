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
  uint64_t size = 0;       // bytes
  int64_t created_at = 0;  // unix seconds: when first linked (0: before migration 22)
};

// A permanent deletion of LFS objects from a repo (issue 19 §4, docs/lfs-files.md).
struct LfsPurgeRecord {
  int64_t id = 0;
  int64_t repo_id = 0;
  std::string user_name;     // who asked
  std::vector<Sha256> oids;  // the objects unlinked
  bool rewrite = false;      // the history was rewritten without their pointers
  std::string refs;          // the refs moved, "<name> <from> <to>\n" each
  int64_t created_at = 0;    // unix seconds
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
  // Records a purge (its id and repo_id as given are ignored / used). Returns its id.
  // Errors: RepoNotFound.
  virtual Result<int64_t> RecordPurge(const LfsPurgeRecord& purge) = 0;
  // The repo's purges, newest first, at most `limit`.
  virtual Result<std::vector<LfsPurgeRecord>> ListPurges(int64_t repo_id, int limit) = 0;
};

}  // namespace hangar::db

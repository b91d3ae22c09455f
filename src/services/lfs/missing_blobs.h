#pragma once
// MissingBlobs: brings LFS objects a repo links but the blob store does not hold yet from
// elsewhere — a pull-through cache's upstream (issue 18 §5, docs/upstream.md), whose repos
// link every object their commits point at and fetch the bytes when first read. The
// services that read LFS bytes (ContentService, LfsService) ask it before answering that an
// object is missing.

#include <cstdint>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::services {

class MissingBlobs {
 public:
  virtual ~MissingBlobs() = default;
  // Whether the missing objects of repo `repo_id` (db::RepoRecord::id) can be brought.
  // Cheap: no network.
  virtual bool Fills(int64_t repo_id) = 0;
  // Brings object `oid` of `size` bytes, linked to repo `repo_id`, into the blob store
  // (verified); concurrent calls for one object fetch it once. Errors: PayloadTooLarge
  // (over a size cap), Unavailable/BadGateway (the upstream unreachable or failing, with
  // its message), NotFound (not the cache's object).
  virtual Result<void> Fill(int64_t repo_id, const Sha256& oid, uint64_t size) = 0;
};

}  // namespace hangar::services

#pragma once
// MemoryBlobStore: a BlobStore in process memory, for tests. Same contract as
// LocalBlobStore; nothing survives the object.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "storage/blob_store.h"

namespace hangar::storage {

// Thread-safe. Writers buffer their bytes in memory (tests only: blobs are small-ish),
// and readers keep a blob alive while they read it, even across Delete().
class MemoryBlobStore final : public BlobStore {
 public:
  MemoryBlobStore();
  ~MemoryBlobStore() override;

  Result<uint64_t> Stat(const Sha256& id) override;
  Result<std::unique_ptr<ByteSource>> Open(const Sha256& id, ByteRange range) override;
  Result<std::unique_ptr<BlobWriter>> Create(const Sha256& expected,
                                             std::optional<uint64_t> expected_size) override;
  Result<void> Delete(const Sha256& id) override;
  // Always "".
  Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) override;
  // Always succeeds.
  Result<void> CheckUsable() override;

  // Writers created and neither committed nor aborted yet (the memory analogue of
  // LocalBlobStore's tmp/ files); tests check it drops back to 0.
  size_t PendingWriters() const;
  // Committed blobs.
  size_t BlobCount() const;

 private:
  class Writer;
  struct State {
    mutable std::mutex mu;
    std::map<Sha256, std::shared_ptr<const std::string>> blobs;
    size_t pending_writers = 0;
  };
  // Shared with live writers, so a writer outliving the store stays safe.
  std::shared_ptr<State> state_;
};

}  // namespace hangar::storage

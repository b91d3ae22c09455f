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

  // Multipart: parts kept as strings; the handle is the key. Same rules as LocalBlobStore.
  Result<std::string> BeginParts(std::string_view key, uint64_t size, uint64_t part_size) override;
  Result<PartInfo> PutPart(std::string_view handle, uint64_t number, uint64_t offset, uint64_t size,
                           ByteSource& body, std::optional<Sha256> sha256) override;
  // Always "".
  Result<std::string> PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                              std::chrono::seconds ttl) override;
  Result<std::vector<PartInfo>> ListParts(std::string_view handle) override;
  Result<void> CompleteParts(std::string_view handle, const Sha256& expected,
                             uint64_t size) override;
  Result<void> AbortParts(std::string_view handle) override;
  Result<std::vector<std::string>> ListStaleParts(std::chrono::seconds older_than) override;
  Result<void> ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) override;
  // Always empty: an unfinished writer's bytes go with it (PendingWriters counts them).
  Result<std::vector<TmpListing>> SweepTemporaries(std::chrono::seconds older_than,
                                                   bool dry_run) override;

  // Writers created and neither committed nor aborted yet (the memory analogue of
  // LocalBlobStore's tmp/ files); tests check it drops back to 0.
  size_t PendingWriters() const;
  // Committed blobs.
  size_t BlobCount() const;

 private:
  class Writer;
  struct Staging {
    uint64_t size = 0;
    uint64_t part_size = 0;
    std::map<uint64_t, std::string> parts;  // number → bytes
    int64_t touched = 0;                    // unix seconds of the last change
  };
  struct State {
    mutable std::mutex mu;
    std::map<Sha256, std::shared_ptr<const std::string>> blobs;
    std::map<Sha256, int64_t> modified;  // unix seconds of the last write of each blob
    std::map<std::string, Staging, std::less<>> staging;
    size_t pending_writers = 0;
  };
  // Shared with live writers, so a writer outliving the store stays safe.
  std::shared_ptr<State> state_;
};

}  // namespace hangar::storage

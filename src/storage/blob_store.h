#pragma once
// BlobStore: immutable byte strings addressed by their Sha256 (LFS objects, OCI blobs).
// Knows nothing of repos, links or HTTP: db/'s link table decides who may read a blob.
// Implementations: LocalBlobStore (storage/local/), MemoryBlobStore (storage/memory/).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/byte_source.h"
#include "core/result.h"
#include "core/sha256.h"
#include "storage/byte_range.h"

namespace hangar::storage {

// One blob being written. Bytes are invisible to readers until Commit() has verified
// them and made them durable. Owned by the caller; not thread-safe (one writer).
// Destroying a writer that was not committed aborts it.
class BlobWriter {
 public:
  virtual ~BlobWriter() = default;

  // Appends `data` to the blob. Streams: the writer holds at most a small fixed buffer.
  // Errors: SizeInvalid as soon as the bytes exceed the expected size given to Create();
  // Internal for I/O failures (e.g. disk full) or when called after Commit()/Abort().
  // Any error aborts the writer: nothing is kept.
  virtual Result<void> Append(std::span<const char> data) = 0;

  // Verifies the size (when one was expected) and the sha256, makes the bytes durable and
  // publishes the blob under its Sha256. If the blob already exists, the new copy is
  // dropped (same address, same bytes) and Commit succeeds.
  // Errors: SizeInvalid, DigestInvalid (messages give expected and actual values),
  // Internal for I/O failures or a second call. On any error nothing becomes visible and
  // every temporary is removed.
  virtual Result<void> Commit() = 0;

  // Drops everything written so far. Idempotent; a no-op after Commit().
  virtual void Abort() = 0;

  // Bytes accepted by Append() so far.
  virtual uint64_t BytesWritten() const = 0;
};

// The store. Thread-safe; every call may block on I/O (run it on the worker pool).
class BlobStore {
 public:
  virtual ~BlobStore() = default;

  // Size of blob `id` in bytes. Errors: BlobUnknown.
  virtual Result<uint64_t> Stat(const Sha256& id) = 0;

  // A stream over `range` of blob `id` (see ResolveRange for the range rules); its Size()
  // is the window's length. Errors: BlobUnknown, RangeNotSatisfiable.
  virtual Result<std::unique_ptr<ByteSource>> Open(const Sha256& id, ByteRange range) = 0;

  // Starts writing the blob whose sha256 must be `expected` and, when given, whose size
  // must be `expected_size` bytes. Works whether or not the blob exists already.
  // Errors: Internal when no temporary can be created.
  virtual Result<std::unique_ptr<BlobWriter>> Create(
      const Sha256& expected, std::optional<uint64_t> expected_size) = 0;

  // Removes blob `id`; readers that already opened it may finish. Callers (GC) make sure
  // no repo links it any more. Errors: BlobUnknown.
  virtual Result<void> Delete(const Sha256& id) = 0;

  // A presigned URL serving blob `id` for `ttl`, or "" when only Hangar can serve it
  // (then the caller proxies via Open()). Errors: BlobUnknown when the store checks.
  virtual Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) = 0;

  // Whether the store can serve reads and writes now (for /readyz and startup).
  // Errors: Unavailable with a message naming what is wrong.
  virtual Result<void> CheckUsable() = 0;
};

}  // namespace hangar::storage

#pragma once
// BlobStore: immutable byte strings addressed by their Sha256 (LFS objects, OCI blobs).
// Knows nothing of repos, links or HTTP: db/'s link table decides who may read a blob.
// Implementations: LocalBlobStore (storage/local/), MemoryBlobStore (storage/memory/),
// S3BlobStore (storage/s3/). tests/storage/blob_store_conformance_test.cc runs on each.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

  // Commit() for a blob whose digest is only known at the end (OCI uploads, oci.md §4):
  // verifies the bytes against `expected` instead of the sha256 given to Create(), or,
  // when `expected` is nullopt, against nothing (the caller verified another digest of
  // them), and publishes them under their own sha256, which it returns. Same errors and
  // guarantees as Commit().
  virtual Result<Sha256> CommitAs(std::optional<Sha256> expected) = 0;

  // Drops everything written so far. Idempotent; a no-op after Commit().
  virtual void Abort() = 0;

  // Bytes accepted by Append() so far.
  virtual uint64_t BytesWritten() const = 0;
};

// One part of a multipart write as the store holds it (BlobStore::PutPart, ListParts).
struct PartInfo {
  uint64_t number = 0;  // 1-based
  uint64_t size = 0;    // bytes
  std::string etag;     // the store's tag for the part's bytes, unquoted: the part's sha256
                        // hex (local, memory) or the object store's ETag (S3)
};

// A committed blob as listed for garbage collection (BlobStore::ForEachBlob).
struct BlobListing {
  Sha256 id;
  uint64_t size = 0;     // bytes
  int64_t modified = 0;  // last write or dedup touch, unix seconds
};

// A temporary an unfinished write left behind (BlobStore::SweepTemporaries).
struct TmpListing {
  std::string name;   // the store's name for it (a file name in the local store's tmp/)
  uint64_t size = 0;  // bytes
};

// The part of BlobWriter every store's writer shares: the size guard, the running sha256
// and byte count, the verdict on what was written (SizeInvalid when the count differs from
// the expected size, else DigestInvalid; the messages give both values), Commit as
// CommitAs of the sha256 given to Create(), refusing calls once finished, and aborting on
// any error. A store says where the bytes go (Store), how verified bytes become visible
// (Publish) and how a write is dropped (Discard). A subclass's destructor calls Abort().
class VerifyingBlobWriter : public BlobWriter {
 public:
  Result<void> Append(std::span<const char> data) final;
  Result<void> Commit() final;
  Result<Sha256> CommitAs(std::optional<Sha256> expected) final;
  void Abort() final;
  uint64_t BytesWritten() const final { return written_; }

 protected:
  VerifyingBlobWriter(const Sha256& expected, std::optional<uint64_t> expected_size)
      : expected_(expected), expected_size_(expected_size) {}
  // Keeps `data`, already counted and hashed. An error aborts the writer.
  virtual Result<void> Store(std::span<const char> data) = 0;
  // Makes every byte stored durable and visible under `id` (they hash to it). An error
  // aborts the writer.
  virtual Result<void> Publish(const Sha256& id) = 0;
  // Drops what was stored; called once, by Abort (also after a failed Store or Publish).
  virtual void Discard() = 0;
  // The sha256 given to Create().
  const Sha256& expected() const { return expected_; }

 private:
  Sha256 expected_;
  std::optional<uint64_t> expected_size_;
  Sha256Hasher hasher_;
  uint64_t written_ = 0;
  bool closed_ = false;
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
  virtual Result<std::unique_ptr<BlobWriter>> Create(const Sha256& expected,
                                                     std::optional<uint64_t> expected_size) = 0;

  // Makes the local file at `path` (`size` bytes) a blob and returns its sha256. A store
  // on the file's file system moves it in (LocalBlobStore: read once to hash it, synced,
  // renamed: no byte copied); others stream it through Create(). The file is gone
  // afterwards, also when the blob existed already. Errors: Internal (the file, the store),
  // SizeInvalid (the file is not `size` bytes).
  virtual Result<Sha256> Adopt(const std::string& path, uint64_t size);

  // Removes blob `id`; readers that already opened it may finish. Callers (GC) make sure
  // no repo links it any more. Errors: BlobUnknown.
  virtual Result<void> Delete(const Sha256& id) = 0;

  // A presigned URL serving blob `id` for `ttl`, or "" when only Hangar can serve it
  // (then the caller proxies via Open()). Errors: BlobUnknown when the store checks.
  virtual Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) = 0;

  // ---- Multipart writes (docs/uploads.md; LFS multipart, hangar upload) ----
  // A blob of `size` bytes assembled from parts of `part_size` bytes (the last may be
  // shorter) that arrive in any order, concurrently, from several processes, across
  // restarts. Nothing is visible under the blob's Sha256 until CompleteParts verified it.

  // Opens a staging area named `key` (32 lower-case hex, unique per upload, chosen by the
  // caller) and returns the store's handle for it, which the caller persists and passes
  // to the calls below. A handle starts with its key (local: the key itself; S3: key and
  // the S3 upload id), so GC can tell which upload a staging area belongs to.
  // Errors: BadRequest for a malformed key or part_size 0, Internal.
  virtual Result<std::string> BeginParts(std::string_view key, uint64_t size,
                                         uint64_t part_size) = 0;

  // Stores part `number`, which covers bytes [offset, offset + size) of the blob, from
  // `body` (exactly `size` bytes). Writing a part again replaces it. When `sha256` is given
  // the part's bytes must hash to it. Errors: NotFound (no such staging area),
  // SizeInvalid (body longer or shorter than `size`), DigestInvalid (nothing of the part
  // is kept: it reads as not uploaded), BadRequest (body cut short), Internal.
  virtual Result<PartInfo> PutPart(std::string_view handle, uint64_t number, uint64_t offset,
                                   uint64_t size, ByteSource& body,
                                   std::optional<Sha256> sha256) = 0;

  // A presigned URL a client may PUT part `number` (of `size` bytes) to directly, valid for
  // `ttl`, or "" when parts go through Hangar (PutPart). Errors: Internal.
  virtual Result<std::string> PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                                      std::chrono::seconds ttl) = 0;

  // The parts stored so far, by number. Errors: NotFound (no such staging area), Internal.
  virtual Result<std::vector<PartInfo>> ListParts(std::string_view handle) = 0;

  // Joins parts 1..ceil(size / part_size) in order, verifies the size and `expected`,
  // publishes the blob (as BlobWriter::Commit: an existing blob stays) and removes the
  // staging area. Errors: NotFound (no such staging area); Conflict naming the missing
  // parts (staging kept, so the client can send them); DigestInvalid / SizeInvalid (the
  // staging area is removed, nothing becomes visible); Internal.
  virtual Result<void> CompleteParts(std::string_view handle, const Sha256& expected,
                                     uint64_t size) = 0;

  // Removes a staging area and its parts. Idempotent: a missing area is not an error.
  virtual Result<void> AbortParts(std::string_view handle) = 0;

  // Handles of staging areas last written more than `older_than` ago (abandoned uploads
  // a crash left without a database row; GC aborts them). Errors: Internal.
  virtual Result<std::vector<std::string>> ListStaleParts(std::chrono::seconds older_than) = 0;

  // ---- Garbage collection ----
  // Removes the temporaries of BlobWriters (not staging areas: ListStaleParts) last
  // written more than `older_than` ago, which only a crash or a killed process leaves,
  // and returns them; with `dry_run` only lists them. Do not pass less than the longest a
  // write may stall, or a live write loses its temporary. Errors: Internal.
  virtual Result<std::vector<TmpListing>> SweepTemporaries(std::chrono::seconds older_than,
                                                           bool dry_run) = 0;

  // Calls `fn` for every committed blob, in no particular order; stops at the first error
  // `fn` returns and passes it on. Blobs added or deleted meanwhile may or may not be seen.
  // Errors: Internal, or fn's.
  virtual Result<void> ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) = 0;

  // Whether the store can serve reads and writes now (for /readyz and startup).
  // Errors: Unavailable with a message naming what is wrong.
  virtual Result<void> CheckUsable() = 0;
};

}  // namespace hangar::storage

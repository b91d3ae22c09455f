#pragma once
// LocalBlobStore: the BlobStore on a local (or shared POSIX) filesystem, the default.

#include <chrono>
#include <filesystem>

#include "storage/blob_store.h"

namespace hangar::storage {

// Disk layout under `root` (the data dir; DESIGN.md §Data dir):
//
//   <root>/
//     blobs/
//       sha256/
//         <hex[0:2]>/
//           <hex[2:4]>/
//             <hex>               a committed blob: complete, verified, never modified
//     tmp/
//       <hex>.<16 random hex>     a write in flight; renamed into blobs/ by Commit()
//       uploads/<key>/            a multipart write (BeginParts .. CompleteParts):
//         meta                    "<size> <part_size>\n"
//         data                    the blob's bytes, each part pwritten at its offset
//         <n>.part                "<size> <sha256 hex>\n": part n is in data and synced
//
//   e.g. blob e3b0c442...7852b855 is <root>/blobs/sha256/e3/b0/e3b0c442...7852b855
//
// A file appears under blobs/ only by rename(2) after its bytes were verified and
// fsynced, so a crash leaves either no blob or the whole blob, plus perhaps a stray file
// in tmp/ (removed by SweepTemporaries). tmp/ sits on the same filesystem so rename is atomic.
//
// Thread-safe and stateless beyond `root`: several processes may share one root.
class LocalBlobStore final : public BlobStore {
 public:
  // Creates <root>/blobs/sha256 and <root>/tmp when missing. Never fails: a root that
  // cannot be created makes CheckUsable() (and every call) report the problem.
  explicit LocalBlobStore(std::filesystem::path root);

  Result<uint64_t> Stat(const Sha256& id) override;
  Result<std::unique_ptr<ByteSource>> Open(const Sha256& id, ByteRange range) override;
  Result<std::unique_ptr<BlobWriter>> Create(const Sha256& expected,
                                             std::optional<uint64_t> expected_size) override;
  // Hashes the file and renames it into place when it is on the store's file system;
  // else BlobStore::Adopt.
  Result<Sha256> Adopt(const std::string& path, uint64_t size) override;
  Result<void> Delete(const Sha256& id) override;
  // Always "": local blobs are served by Hangar itself.
  Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) override;
  // Multipart: the handle is the key. A part is pwritten into uploads/<key>/data and
  // fdatasynced before its <n>.part marker is renamed into place, so a crash leaves
  // each part either recorded or missing. CompleteParts hashes data and renames it into
  // blobs/ (one copy of the bytes, no reassembly).
  Result<std::string> BeginParts(std::string_view key, uint64_t size, uint64_t part_size) override;
  Result<PartInfo> PutPart(std::string_view handle, uint64_t number, uint64_t offset, uint64_t size,
                           ByteSource& body, std::optional<Sha256> sha256) override;
  // Always "": parts go through Hangar.
  Result<std::string> PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                              std::chrono::seconds ttl) override;
  Result<std::vector<PartInfo>> ListParts(std::string_view handle) override;
  Result<void> CompleteParts(std::string_view handle, const Sha256& expected,
                             uint64_t size) override;
  Result<void> AbortParts(std::string_view handle) override;
  Result<std::vector<std::string>> ListStaleParts(std::chrono::seconds older_than) override;
  Result<void> ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) override;

  // Unavailable unless blobs/sha256/ and tmp/ exist and are writable.
  Result<void> CheckUsable() override;

  // The regular files directly in tmp/ (a writer's "<hex>.<random>"); uploads/ holds the
  // staging areas. Errors: Internal when tmp/ cannot be listed.
  Result<std::vector<TmpListing>> SweepTemporaries(std::chrono::seconds older_than,
                                                   bool dry_run) override;

  // Where blob `id` lives (or would live) on disk.
  std::filesystem::path BlobPath(const Sha256& id) const;
  // The directory of in-flight writes.
  const std::filesystem::path& TmpDir() const { return tmp_dir_; }

 private:
  std::filesystem::path root_;
  std::filesystem::path blobs_dir_;    // <root>/blobs/sha256
  std::filesystem::path tmp_dir_;      // <root>/tmp
  std::filesystem::path uploads_dir_;  // <root>/tmp/uploads

  // uploads/<handle>, or NotFound / BadRequest for a handle that is not a staging key.
  Result<std::filesystem::path> StagingDir(std::string_view handle) const;
};

}  // namespace hangar::storage

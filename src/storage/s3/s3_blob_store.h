#pragma once
// S3BlobStore: the BlobStore on an S3-compatible object store (AWS S3, MinIO, Ceph RGW),
// for several Hangar replicas sharing one bucket (DESIGN.md §Scale-out).

#include <chrono>
#include <memory>
#include <string>

#include "storage/blob_store.h"

namespace hangar::storage {

class S3Api;

// Where and how to reach the bucket ([storage] s3_* keys, docs/config.md).
struct S3Options {
  std::string endpoint;  // "https://s3.eu-west-1.amazonaws.com", "http://minio:9000";
                         // "" = https://s3.<region>.amazonaws.com
  std::string bucket;    // must exist; Hangar does not create it
  std::string region = "us-east-1";
  std::string access_key;  // SigV4 credentials
  std::string secret_key;
  bool path_style = false;    // <endpoint>/<bucket>/<key> (MinIO, moto) instead of
                              // <bucket>.<endpoint host>/<key>
  std::string prefix;         // prepended to every key, e.g. "hangar/"; "" = bucket root
  bool direct_parts = false;  // PartUrl gives presigned UploadPart URLs (upload_mode=direct)
  // Smallest part_size BeginParts accepts for a blob of more than one part: S3 refuses
  // parts (but the last) under 5 MiB. Lower it only for S3 doubles that accept less (tests).
  uint64_t min_part_size = uint64_t{5} << 20;
};

// Object layout in the bucket (like LocalBlobStore's disk layout):
//
//   <prefix>sha256/<hex>                 a committed blob: complete, verified, never modified
//   <prefix>uploads/<name>               staging objects, and the key of S3 multipart uploads:
//     <key>-<part_size>-<begun>            a BeginParts staging area (key: 32 hex)
//     w<hex>.<16 hex>-<begun>              a BlobWriter's write of blob <hex> in flight
//                                          (<begun>: unix seconds when it was opened)
//
// A blob appears under sha256/ only by a PUT of bytes already verified in memory (blobs
// smaller than one part) or by a server-side copy of a staging object whose sha256 was
// verified, so no wrong bytes are ever visible under a blob's name. A crash leaves at most
// staging objects and open multipart uploads under uploads/, which ListStaleParts reports.
//
// Handles (BeginParts): "<name>:<S3 upload id>".
//
// Memory: a writer buffers one part (8 MiB, more for blobs over ~70 GiB, S3 allowing 10,000
// parts); a reader holds about 1 MiB (net::HttpStream). Thread-safe: HTTP clients are
// pooled, one per concurrent call.
class S3BlobStore final : public BlobStore {
 public:
  explicit S3BlobStore(S3Options options);
  ~S3BlobStore() override;

  Result<uint64_t> Stat(const Sha256& id) override;
  Result<std::unique_ptr<ByteSource>> Open(const Sha256& id, ByteRange range) override;
  Result<std::unique_ptr<BlobWriter>> Create(const Sha256& expected,
                                             std::optional<uint64_t> expected_size) override;
  Result<void> Delete(const Sha256& id) override;
  // A presigned GET of the blob's object. Does not check that the blob exists (the
  // caller knows from its link table; a missing object gives the client S3's 404).
  Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) override;

  Result<std::string> BeginParts(std::string_view key, uint64_t size, uint64_t part_size) override;
  // Streams the part to UploadPart while hashing it; a digest or size mismatch aborts the
  // transfer before its last byte, so S3 never stores that attempt (an earlier upload of the
  // same part number stays listed: S3 cannot delete one part).
  Result<PartInfo> PutPart(std::string_view handle, uint64_t number, uint64_t offset, uint64_t size,
                           ByteSource& body, std::optional<Sha256> sha256) override;
  // A presigned UploadPart PUT when S3Options::direct_parts, else "".
  Result<std::string> PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                              std::chrono::seconds ttl) override;
  Result<std::vector<PartInfo>> ListParts(std::string_view handle) override;
  // CompleteMultipartUpload, then reads the staging object back to verify its sha256
  // (S3 does not give it), then copies it to the blob's key.
  Result<void> CompleteParts(std::string_view handle, const Sha256& expected,
                             uint64_t size) override;
  Result<void> AbortParts(std::string_view handle) override;
  Result<std::vector<std::string>> ListStaleParts(std::chrono::seconds older_than) override;
  Result<void> ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) override;
  // Always empty: a writer stages under <prefix>uploads/ too (a multipart upload or an
  // object named "w<sha256>.<random>"), so what a crash leaves is in ListStaleParts.
  Result<std::vector<TmpListing>> SweepTemporaries(std::chrono::seconds older_than,
                                                   bool dry_run) override;
  // HEAD of the bucket. Errors: Unavailable naming the endpoint and bucket.
  Result<void> CheckUsable() override;

  // Writers created and neither committed nor aborted yet (tests check it drops to 0).
  size_t PendingWriters() const;
  // Objects and open multipart uploads under <prefix>uploads/ (tests: leftovers).
  Result<size_t> StagingCount();

 private:
  std::shared_ptr<S3Api> api_;
};

}  // namespace hangar::storage

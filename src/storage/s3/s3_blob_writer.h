#pragma once
// S3BlobWriter: S3BlobStore's BlobWriter (internal to storage/s3/).

#include <memory>
#include <optional>

#include "storage/s3/s3_api.h"

namespace hangar::storage {

// Bytes go into a buffer of one part; a blob that outgrows it streams into a multipart
// upload on a staging key (<prefix>uploads/w<hex>.<random>), is verified on Commit, then
// copied server-side to its final key. A blob of at most one part is verified in memory
// and PUT straight to its final key. Not thread-safe (one writer).
std::unique_ptr<BlobWriter> MakeS3BlobWriter(std::shared_ptr<S3Api> api, const Sha256& expected,
                                             std::optional<uint64_t> expected_size);

// A ByteSource over bytes someone else owns.
class SpanSource final : public ByteSource {
 public:
  explicit SpanSource(std::string_view data) : data_(data) {}
  Result<size_t> Read(std::span<char> buf) override;
  std::optional<uint64_t> Size() const override { return data_.size(); }

 private:
  std::string_view data_;
};

}  // namespace hangar::storage

#include "storage/s3/s3_blob_writer.h"

#include <algorithm>
#include <cstring>

#include "core/util.h"

namespace hangar::storage {
namespace {

// Part size for blobs of unknown or moderate size: above S3's 5 MiB minimum, and the
// writer's whole memory.
constexpr uint64_t kPartBytes = uint64_t{8} << 20;
// S3 allows 10,000 parts; leave room so a blob of known size always fits.
constexpr uint64_t kMaxParts = 9000;
// Tries of the final PUT of a small blob (S3 asks clients to retry 500 and 503).
constexpr int kAttempts = 3;

class S3BlobWriter final : public VerifyingBlobWriter {
 public:
  S3BlobWriter(std::shared_ptr<S3Api> api, const Sha256& expected,
               std::optional<uint64_t> expected_size)
      : VerifyingBlobWriter(expected, expected_size), api_(std::move(api)) {
    part_bytes_ = kPartBytes;
    if (expected_size) {
      part_bytes_ = std::max(kPartBytes, (*expected_size + kMaxParts - 1) / kMaxParts);
    }
    staging_key_ = api_->UploadsPrefix() + "w" + expected.Hex() + "." + RandomHex(8) + "-" +
                   std::to_string(NowUnix());
    ++api_->pending_writers;
  }

  ~S3BlobWriter() override { Abort(); }

 private:
  // Fills the part being built; each full part goes to the staging upload.
  Result<void> Store(std::span<const char> data) override {
    while (!data.empty()) {
      size_t n = std::min<size_t>(data.size(), part_bytes_ - buffer_.size());
      buffer_.append(data.data(), n);
      data = data.subspan(n);
      if (buffer_.size() == part_bytes_) HANGAR_TRY(FlushPart());
    }
    return {};
  }

  // The staging key keeps the sha256 given to Create(); only the final key needs `id`.
  Result<void> Publish(const Sha256& id) override {
    HANGAR_TRY(upload_id_.empty() ? PublishSmall(id) : PublishStaged(id));
    --api_->pending_writers;
    return {};
  }

  void Discard() override {
    --api_->pending_writers;
    buffer_.clear();
    buffer_.shrink_to_fit();
    // Best effort: what fails here stays under uploads/ for ListStaleParts and GC.
    if (!upload_id_.empty()) (void)api_->AbortMultipart(staging_key_, upload_id_);
    if (completed_) (void)api_->DeleteObject(staging_key_);
  }

  Result<void> FlushPart() {
    if (upload_id_.empty()) {
      HANGAR_ASSIGN_OR_RETURN(auto id, api_->CreateMultipart(staging_key_));
      upload_id_ = id;
    }
    SpanSource body(buffer_);
    HANGAR_ASSIGN_OR_RETURN(auto etag,
                            api_->UploadPart(staging_key_, upload_id_, parts_.size() + 1, body));
    parts_.emplace_back(parts_.size() + 1, etag);
    buffer_.clear();
    return {};
  }

  // The whole blob is in buffer_ and verified: one PUT to its final key, which S3 checks
  // against the signed x-amz-content-sha256 (the blob's own sha256).
  Result<void> PublishSmall(const Sha256& id) {
    const std::string key = api_->BlobKey(id);
    HANGAR_ASSIGN_OR_RETURN(auto exists, api_->Head(key));
    if (exists) return api_->Touch(key, *exists);  // same address, same bytes
    for (int attempt = 1;; ++attempt) {
      SpanSource body(buffer_);
      auto res = api_->Call("PUT", key, {}, {{"x-amz-content-sha256", id.Hex()}}, &body);
      if (res && res->status >= 200 && res->status < 300) return {};
      if (attempt == kAttempts || (res && !S3Api::Retryable(*res)) ||
          (!res && res.error().code != ErrorCode::Unavailable)) {
        return res ? api_->Fail("PUT " + key, *res) : std::move(res).error();
      }
      S3Api::Backoff(attempt);
    }
  }

  // Parts uploaded to staging: complete, copy to the final key, drop staging.
  Result<void> PublishStaged(const Sha256& id) {
    if (!buffer_.empty()) HANGAR_TRY(FlushPart());
    HANGAR_TRY(api_->CompleteMultipart(staging_key_, upload_id_, parts_));
    upload_id_.clear();
    completed_ = true;
    const std::string key = api_->BlobKey(id);
    HANGAR_ASSIGN_OR_RETURN(auto exists, api_->Head(key));
    HANGAR_TRY(exists ? api_->Touch(key, *exists) : api_->Copy(staging_key_, key, BytesWritten()));
    HANGAR_TRY(api_->DeleteObject(staging_key_));
    completed_ = false;
    return {};
  }

  std::shared_ptr<S3Api> api_;
  uint64_t part_bytes_;
  std::string staging_key_;
  std::string buffer_;                                   // bytes of the part being filled
  std::string upload_id_;                                // "" until the first part is sent
  std::vector<std::pair<uint64_t, std::string>> parts_;  // (number, etag)
  bool completed_ = false;                               // the staging object exists
};

}  // namespace

Result<size_t> SpanSource::Read(std::span<char> buf) {
  size_t n = std::min(buf.size(), data_.size());
  std::memcpy(buf.data(), data_.data(), n);
  data_.remove_prefix(n);
  return n;
}

std::unique_ptr<BlobWriter> MakeS3BlobWriter(std::shared_ptr<S3Api> api, const Sha256& expected,
                                             std::optional<uint64_t> expected_size) {
  return std::make_unique<S3BlobWriter>(std::move(api), expected, expected_size);
}

}  // namespace hangar::storage

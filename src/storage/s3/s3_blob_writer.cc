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

class S3BlobWriter final : public BlobWriter {
 public:
  S3BlobWriter(std::shared_ptr<S3Api> api, const Sha256& expected,
               std::optional<uint64_t> expected_size)
      : api_(std::move(api)), expected_(expected), expected_size_(expected_size) {
    part_bytes_ = kPartBytes;
    if (expected_size_) {
      part_bytes_ = std::max(kPartBytes, (*expected_size_ + kMaxParts - 1) / kMaxParts);
    }
    staging_key_ = api_->UploadsPrefix() + "w" + expected_.Hex() + "." + RandomHex(8) + "-" +
                   std::to_string(NowUnix());
    ++api_->pending_writers;
  }

  ~S3BlobWriter() override { Abort(); }

  Result<void> Append(std::span<const char> data) override {
    if (closed_) return MakeError(ErrorCode::Internal, "blob writer is already closed");
    if (expected_size_ && data.size() > *expected_size_ - written_) {
      Abort();
      return MakeError(ErrorCode::SizeInvalid, "blob is larger than the expected " +
                                                   std::to_string(*expected_size_) + " bytes");
    }
    hasher_.Update(std::string_view(data.data(), data.size()));
    written_ += data.size();
    while (!data.empty()) {
      size_t n = std::min<size_t>(data.size(), part_bytes_ - buffer_.size());
      buffer_.append(data.data(), n);
      data = data.subspan(n);
      if (buffer_.size() == part_bytes_) {
        if (auto r = FlushPart(); !r) {
          Abort();
          return r;
        }
      }
    }
    return {};
  }

  Result<void> Commit() override {
    auto r = CommitAs(expected_);
    if (!r) return std::move(r).error();
    return {};
  }

  // The staging key keeps the sha256 given to Create(); only the final key needs the
  // real one, and Publish*() read it from expected_.
  Result<Sha256> CommitAs(std::optional<Sha256> expected) override {
    if (closed_) return MakeError(ErrorCode::Internal, "blob writer is already closed");
    Sha256 actual = hasher_.Finish();
    expected_ = expected.value_or(actual);
    if (auto r = CheckWritten(written_, expected_size_, actual, expected_); !r) {
      Abort();
      return std::move(r).error();
    }
    auto r = upload_id_.empty() ? PublishSmall() : PublishStaged();
    if (!r) {
      Abort();
      return std::move(r).error();
    }
    Close();
    return actual;
  }

  void Abort() override {
    if (closed_) return;
    Close();
    buffer_.clear();
    buffer_.shrink_to_fit();
    // Best effort: what fails here stays under uploads/ for ListStaleParts and GC.
    if (!upload_id_.empty()) (void)api_->AbortMultipart(staging_key_, upload_id_);
    if (completed_) (void)api_->DeleteObject(staging_key_);
  }

  uint64_t BytesWritten() const override { return written_; }

 private:
  void Close() {
    closed_ = true;
    --api_->pending_writers;
  }

  Result<void> FlushPart() {
    if (upload_id_.empty()) {
      auto id = api_->CreateMultipart(staging_key_);
      if (!id) return std::move(id).error();
      upload_id_ = *id;
    }
    SpanSource body(buffer_);
    auto etag = api_->UploadPart(staging_key_, upload_id_, parts_.size() + 1, body);
    if (!etag) return std::move(etag).error();
    parts_.emplace_back(parts_.size() + 1, *etag);
    buffer_.clear();
    return {};
  }

  // The whole blob is in buffer_ and verified: one PUT to its final key, which S3 checks
  // against the signed x-amz-content-sha256 (the blob's own sha256).
  Result<void> PublishSmall() {
    const std::string key = api_->BlobKey(expected_);
    auto exists = api_->Head(key);
    if (!exists) return std::move(exists).error();
    if (*exists) return api_->Touch(key, **exists);  // same address, same bytes
    for (int attempt = 1;; ++attempt) {
      SpanSource body(buffer_);
      auto res = api_->Call("PUT", key, {}, {{"x-amz-content-sha256", expected_.Hex()}}, &body);
      if (res && res->status >= 200 && res->status < 300) return {};
      if (attempt == kAttempts || (res && !S3Api::Retryable(*res)) ||
          (!res && res.error().code != ErrorCode::Unavailable)) {
        return res ? api_->Fail("PUT " + key, *res) : std::move(res).error();
      }
      S3Api::Backoff(attempt);
    }
  }

  // Parts uploaded to staging: complete, copy to the final key, drop staging.
  Result<void> PublishStaged() {
    if (!buffer_.empty()) HANGAR_TRY(FlushPart());
    HANGAR_TRY(api_->CompleteMultipart(staging_key_, upload_id_, parts_));
    upload_id_.clear();
    completed_ = true;
    const std::string key = api_->BlobKey(expected_);
    auto exists = api_->Head(key);
    if (!exists) return std::move(exists).error();
    HANGAR_TRY(*exists ? api_->Touch(key, **exists) : api_->Copy(staging_key_, key, written_));
    HANGAR_TRY(api_->DeleteObject(staging_key_));
    completed_ = false;
    return {};
  }

  std::shared_ptr<S3Api> api_;
  Sha256 expected_;
  std::optional<uint64_t> expected_size_;
  uint64_t part_bytes_;
  std::string staging_key_;
  Sha256Hasher hasher_;
  std::string buffer_;  // bytes of the part being filled
  uint64_t written_ = 0;
  std::string upload_id_;                                // "" until the first part is sent
  std::vector<std::pair<uint64_t, std::string>> parts_;  // (number, etag)
  bool completed_ = false;                               // the staging object exists
  bool closed_ = false;
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

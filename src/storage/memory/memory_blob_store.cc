#include "storage/memory/memory_blob_store.h"

#include <algorithm>
#include <cstring>

namespace hangar::storage {
namespace {

Error UnknownBlob(const Sha256& id) {
  return MakeError(ErrorCode::BlobUnknown, "blob sha256:" + id.Hex() + " is unknown");
}

// Reads a window of a shared immutable string.
class SharedStringSource final : public ByteSource {
 public:
  SharedStringSource(std::shared_ptr<const std::string> data, uint64_t offset, uint64_t length)
      : data_(std::move(data)), pos_(offset), remaining_(length) {}

  Result<size_t> Read(std::span<char> buf) override {
    size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), remaining_));
    std::memcpy(buf.data(), data_->data() + pos_, n);
    pos_ += n;
    remaining_ -= n;
    return n;
  }
  std::optional<uint64_t> Size() const override { return remaining_; }

 private:
  std::shared_ptr<const std::string> data_;
  uint64_t pos_;
  uint64_t remaining_;
};

}  // namespace

class MemoryBlobStore::Writer final : public BlobWriter {
 public:
  Writer(std::shared_ptr<State> state, Sha256 expected, std::optional<uint64_t> expected_size)
      : state_(std::move(state)), expected_(expected), expected_size_(expected_size) {
    std::lock_guard lock(state_->mu);
    ++state_->pending_writers;
  }
  ~Writer() override { Abort(); }

  Result<void> Append(std::span<const char> data) override {
    if (closed_) return MakeError(ErrorCode::Internal, "blob writer is already closed");
    if (expected_size_ && data.size() > *expected_size_ - data_.size()) {
      Abort();
      return MakeError(ErrorCode::SizeInvalid,
                       "blob is larger than the expected " + std::to_string(*expected_size_) +
                           " bytes");
    }
    data_.append(data.data(), data.size());
    return {};
  }

  Result<void> Commit() override {
    if (closed_) return MakeError(ErrorCode::Internal, "blob writer is already closed");
    if (expected_size_ && data_.size() != *expected_size_) {
      Error e = MakeError(ErrorCode::SizeInvalid, "received " + std::to_string(data_.size()) +
                                                      " bytes, expected " +
                                                      std::to_string(*expected_size_));
      Abort();
      return e;
    }
    Sha256 actual = Sha256::Of(data_);
    if (actual != expected_) {
      Abort();
      return MakeError(ErrorCode::DigestInvalid,
                       "content has sha256 " + actual.Hex() + ", expected " + expected_.Hex());
    }
    auto blob = std::make_shared<const std::string>(std::move(data_));
    std::lock_guard lock(state_->mu);
    state_->blobs.try_emplace(expected_, std::move(blob));  // existing: identical bytes
    --state_->pending_writers;
    closed_ = true;
    return {};
  }

  void Abort() override {
    if (closed_) return;
    closed_ = true;
    data_.clear();
    data_.shrink_to_fit();
    std::lock_guard lock(state_->mu);
    --state_->pending_writers;
  }

  uint64_t BytesWritten() const override { return data_.size(); }

 private:
  std::shared_ptr<State> state_;
  Sha256 expected_;
  std::optional<uint64_t> expected_size_;
  std::string data_;
  bool closed_ = false;
};

MemoryBlobStore::MemoryBlobStore() : state_(std::make_shared<State>()) {}
MemoryBlobStore::~MemoryBlobStore() = default;

Result<uint64_t> MemoryBlobStore::Stat(const Sha256& id) {
  std::lock_guard lock(state_->mu);
  auto it = state_->blobs.find(id);
  if (it == state_->blobs.end()) return UnknownBlob(id);
  return static_cast<uint64_t>(it->second->size());
}

Result<std::unique_ptr<ByteSource>> MemoryBlobStore::Open(const Sha256& id, ByteRange range) {
  std::shared_ptr<const std::string> blob;
  {
    std::lock_guard lock(state_->mu);
    auto it = state_->blobs.find(id);
    if (it == state_->blobs.end()) return UnknownBlob(id);
    blob = it->second;
  }
  auto window = ResolveRange(range, blob->size());
  if (!window) return std::move(window).error();
  return std::unique_ptr<ByteSource>(
      std::make_unique<SharedStringSource>(std::move(blob), window->offset, window->length));
}

Result<std::unique_ptr<BlobWriter>> MemoryBlobStore::Create(
    const Sha256& expected, std::optional<uint64_t> expected_size) {
  return std::unique_ptr<BlobWriter>(std::make_unique<Writer>(state_, expected, expected_size));
}

Result<void> MemoryBlobStore::Delete(const Sha256& id) {
  std::lock_guard lock(state_->mu);
  if (state_->blobs.erase(id) == 0) return UnknownBlob(id);
  return {};
}

Result<std::string> MemoryBlobStore::RedirectUrl(const Sha256& id, std::chrono::seconds ttl) {
  return std::string();
}

Result<void> MemoryBlobStore::CheckUsable() { return {}; }

size_t MemoryBlobStore::PendingWriters() const {
  std::lock_guard lock(state_->mu);
  return state_->pending_writers;
}

size_t MemoryBlobStore::BlobCount() const {
  std::lock_guard lock(state_->mu);
  return state_->blobs.size();
}

}  // namespace hangar::storage

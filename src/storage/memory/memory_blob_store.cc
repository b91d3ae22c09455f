#include "storage/memory/memory_blob_store.h"

#include "core/util.h"

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

class MemoryBlobStore::Writer final : public VerifyingBlobWriter {
 public:
  Writer(std::shared_ptr<State> state, Sha256 expected, std::optional<uint64_t> expected_size)
      : VerifyingBlobWriter(expected, expected_size), state_(std::move(state)) {
    std::lock_guard lock(state_->mu);
    ++state_->pending_writers;
  }
  ~Writer() override { Abort(); }

 private:
  Result<void> Store(std::span<const char> data) override {
    data_.append(data.data(), data.size());
    return {};
  }

  Result<void> Publish(const Sha256& id) override {
    auto blob = std::make_shared<const std::string>(std::move(data_));
    std::lock_guard lock(state_->mu);
    state_->blobs.try_emplace(id, std::move(blob));  // existing: identical bytes
    state_->modified[id] = NowUnix();
    --state_->pending_writers;
    return {};
  }

  void Discard() override {
    data_.clear();
    data_.shrink_to_fit();
    std::lock_guard lock(state_->mu);
    --state_->pending_writers;
  }

  std::shared_ptr<State> state_;
  std::string data_;
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
  HANGAR_ASSIGN_OR_RETURN(auto window, ResolveRange(range, blob->size()));
  return std::unique_ptr<ByteSource>(
      std::make_unique<SharedStringSource>(std::move(blob), window.offset, window.length));
}

Result<std::unique_ptr<BlobWriter>> MemoryBlobStore::Create(const Sha256& expected,
                                                            std::optional<uint64_t> expected_size) {
  return std::unique_ptr<BlobWriter>(std::make_unique<Writer>(state_, expected, expected_size));
}

Result<void> MemoryBlobStore::Delete(const Sha256& id) {
  std::lock_guard lock(state_->mu);
  if (state_->blobs.erase(id) == 0) return UnknownBlob(id);
  state_->modified.erase(id);
  return {};
}

Result<std::string> MemoryBlobStore::RedirectUrl(const Sha256& id, std::chrono::seconds ttl) {
  return std::string();
}

Result<void> MemoryBlobStore::CheckUsable() { return {}; }

Result<std::vector<TmpListing>> MemoryBlobStore::SweepTemporaries(std::chrono::seconds, bool) {
  return std::vector<TmpListing>{};
}

size_t MemoryBlobStore::PendingWriters() const {
  std::lock_guard lock(state_->mu);
  return state_->pending_writers;
}

size_t MemoryBlobStore::BlobCount() const {
  std::lock_guard lock(state_->mu);
  return state_->blobs.size();
}

namespace {

Error NoStaging(std::string_view handle) {
  return MakeError(ErrorCode::NotFound, "no upload staging area " + std::string(handle));
}

}  // namespace

Result<std::string> MemoryBlobStore::BeginParts(std::string_view key, uint64_t size,
                                                uint64_t part_size) {
  if (part_size == 0) return MakeError(ErrorCode::BadRequest, "part size must be positive");
  std::lock_guard lock(state_->mu);
  auto [it, inserted] = state_->staging.try_emplace(std::string(key));
  if (!inserted)
    return MakeError(ErrorCode::Conflict, "upload key " + std::string(key) + " is taken");
  it->second = Staging{size, part_size, {}, NowUnix()};
  return std::string(key);
}

Result<PartInfo> MemoryBlobStore::PutPart(std::string_view handle, uint64_t number, uint64_t offset,
                                          uint64_t size, ByteSource& body,
                                          std::optional<Sha256> sha256) {
  {
    std::lock_guard lock(state_->mu);
    auto it = state_->staging.find(handle);
    if (it == state_->staging.end()) return NoStaging(handle);
    if (number == 0 || offset > it->second.size || size > it->second.size - offset) {
      return MakeError(ErrorCode::BadRequest,
                       "part " + std::to_string(number) + " lies outside the upload");
    }
    it->second.parts.erase(number);  // "missing" while it is being replaced
  }
  std::string bytes;
  std::string buf(64 * 1024, '\0');
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, body.Read(std::span<char>(buf.data(), buf.size())));
    if (n == 0) break;
    if (n > size - bytes.size()) {
      return MakeError(
          ErrorCode::SizeInvalid,
          "part " + std::to_string(number) + " is longer than " + std::to_string(size) + " bytes");
    }
    bytes.append(buf.data(), n);
  }
  if (bytes.size() != size) {
    return MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(number) + " has " +
                                                 std::to_string(bytes.size()) +
                                                 " bytes, expected " + std::to_string(size));
  }
  Sha256 actual = Sha256::Of(bytes);
  if (sha256 && actual != *sha256) {
    return MakeError(ErrorCode::DigestInvalid, "part " + std::to_string(number) + " has sha256 " +
                                                   actual.Hex() + ", expected " + sha256->Hex());
  }
  std::lock_guard lock(state_->mu);
  auto it = state_->staging.find(handle);
  if (it == state_->staging.end()) return NoStaging(handle);
  it->second.parts[number] = std::move(bytes);
  it->second.touched = NowUnix();
  return PartInfo{number, size, actual.Hex()};
}

Result<std::string> MemoryBlobStore::PartUrl(std::string_view, uint64_t, uint64_t,
                                             std::chrono::seconds) {
  return std::string();
}

Result<std::vector<PartInfo>> MemoryBlobStore::ListParts(std::string_view handle) {
  std::lock_guard lock(state_->mu);
  auto it = state_->staging.find(handle);
  if (it == state_->staging.end()) return NoStaging(handle);
  std::vector<PartInfo> out;
  for (const auto& [n, bytes] : it->second.parts) {
    out.push_back(PartInfo{n, bytes.size(), Sha256::Of(bytes).Hex()});
  }
  return out;
}

Result<void> MemoryBlobStore::CompleteParts(std::string_view handle, const Sha256& expected,
                                            uint64_t size) {
  std::lock_guard lock(state_->mu);
  auto it = state_->staging.find(handle);
  if (it == state_->staging.end()) return NoStaging(handle);
  const Staging& st = it->second;
  if (st.size != size) {
    Error e = MakeError(ErrorCode::SizeInvalid, "upload holds " + std::to_string(st.size) +
                                                    " bytes, expected " + std::to_string(size));
    state_->staging.erase(it);
    return e;
  }
  std::string missing;
  std::string joined;
  uint64_t count = (st.size + st.part_size - 1) / st.part_size;
  for (uint64_t n = 1; n <= count; ++n) {
    uint64_t want = std::min(st.part_size, st.size - (n - 1) * st.part_size);
    auto p = st.parts.find(n);
    if (p == st.parts.end() || p->second.size() != want) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(n);
    } else {
      joined += p->second;
    }
  }
  if (!missing.empty()) {
    return MakeError(ErrorCode::Conflict, "part(s) not uploaded yet: " + missing);
  }
  state_->staging.erase(it);
  Sha256 actual = Sha256::Of(joined);
  if (actual != expected) {
    return MakeError(ErrorCode::DigestInvalid, "uploaded content has sha256 " + actual.Hex() +
                                                   ", expected " + expected.Hex());
  }
  state_->blobs.try_emplace(expected, std::make_shared<const std::string>(std::move(joined)));
  state_->modified[expected] = NowUnix();
  return {};
}

Result<void> MemoryBlobStore::AbortParts(std::string_view handle) {
  std::lock_guard lock(state_->mu);
  if (auto it = state_->staging.find(handle); it != state_->staging.end()) {
    state_->staging.erase(it);
  }
  return {};
}

Result<std::vector<std::string>> MemoryBlobStore::ListStaleParts(std::chrono::seconds older_than) {
  std::lock_guard lock(state_->mu);
  std::vector<std::string> out;
  int64_t cutoff = NowUnix() - older_than.count();
  for (const auto& [key, st] : state_->staging) {
    if (st.touched < cutoff) out.push_back(key);
  }
  return out;
}

Result<void> MemoryBlobStore::ForEachBlob(
    const std::function<Result<void>(const BlobListing&)>& fn) {
  std::vector<BlobListing> all;
  {
    std::lock_guard lock(state_->mu);
    for (const auto& [id, blob] : state_->blobs) {
      all.push_back(BlobListing{id, blob->size(), state_->modified[id]});
    }
  }
  for (const auto& b : all) HANGAR_TRY(fn(b));
  return {};
}

}  // namespace hangar::storage

#include "storage/metered/metered_blob_store.h"

#include <chrono>

namespace hangar::storage {
namespace {

constexpr std::array<const char*, 13> kOpNames = {
    "stat",           "open",        "create",   "adopt",    "delete",
    "redirect",       "begin_parts", "put_part", "part_url", "list_parts",
    "complete_parts", "abort_parts", "check"};

}  // namespace

MeteredBlobStore::MeteredBlobStore(std::unique_ptr<BlobStore> inner, metrics::Registry& registry)
    : inner_(std::move(inner)) {
  static_assert(kOpNames.size() == kOps);
  auto& latency = prometheus::BuildHistogram()
                      .Name("hangar_blob_store_duration_seconds")
                      .Help("Blob store calls by operation, seconds (streams: to their opening)")
                      .Register(registry.prom());
  auto& errors = prometheus::BuildCounter()
                     .Name("hangar_blob_store_errors_total")
                     .Help("Blob store calls that returned an error, by operation")
                     .Register(registry.prom());
  for (size_t i = 0; i < kOps; ++i) {
    series_[i].latency = &latency.Add({{"op", kOpNames[i]}}, metrics::LatencyBuckets());
    series_[i].errors = &errors.Add({{"op", kOpNames[i]}});
  }
}

template <typename F>
auto MeteredBlobStore::Timed(Op op, F&& call) -> decltype(call()) {
  auto start = std::chrono::steady_clock::now();
  auto result = call();
  series_[op].latency->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!result) series_[op].errors->Increment();
  return result;
}

Result<uint64_t> MeteredBlobStore::Stat(const Sha256& id) {
  return Timed(kStat, [&] { return inner_->Stat(id); });
}
Result<std::unique_ptr<ByteSource>> MeteredBlobStore::Open(const Sha256& id, ByteRange range) {
  return Timed(kOpen, [&] { return inner_->Open(id, range); });
}
Result<std::unique_ptr<BlobWriter>> MeteredBlobStore::Create(
    const Sha256& expected, std::optional<uint64_t> expected_size) {
  return Timed(kCreate, [&] { return inner_->Create(expected, expected_size); });
}
Result<Sha256> MeteredBlobStore::Adopt(const std::string& path, uint64_t size) {
  return Timed(kAdopt, [&] { return inner_->Adopt(path, size); });
}
Result<void> MeteredBlobStore::Delete(const Sha256& id) {
  return Timed(kDelete, [&] { return inner_->Delete(id); });
}
Result<std::string> MeteredBlobStore::RedirectUrl(const Sha256& id, std::chrono::seconds ttl) {
  return Timed(kRedirect, [&] { return inner_->RedirectUrl(id, ttl); });
}
Result<std::string> MeteredBlobStore::BeginParts(std::string_view key, uint64_t size,
                                                 uint64_t part_size) {
  return Timed(kBeginParts, [&] { return inner_->BeginParts(key, size, part_size); });
}
Result<PartInfo> MeteredBlobStore::PutPart(std::string_view handle, uint64_t number,
                                           uint64_t offset, uint64_t size, ByteSource& body,
                                           std::optional<Sha256> sha256) {
  return Timed(kPutPart,
               [&] { return inner_->PutPart(handle, number, offset, size, body, sha256); });
}
Result<std::string> MeteredBlobStore::PartUrl(std::string_view handle, uint64_t number,
                                              uint64_t size, std::chrono::seconds ttl) {
  return Timed(kPartUrl, [&] { return inner_->PartUrl(handle, number, size, ttl); });
}
Result<std::vector<PartInfo>> MeteredBlobStore::ListParts(std::string_view handle) {
  return Timed(kListParts, [&] { return inner_->ListParts(handle); });
}
Result<void> MeteredBlobStore::CompleteParts(std::string_view handle, const Sha256& expected,
                                             uint64_t size) {
  return Timed(kCompleteParts, [&] { return inner_->CompleteParts(handle, expected, size); });
}
Result<void> MeteredBlobStore::AbortParts(std::string_view handle) {
  return Timed(kAbortParts, [&] { return inner_->AbortParts(handle); });
}
Result<std::vector<std::string>> MeteredBlobStore::ListStaleParts(std::chrono::seconds older_than) {
  return inner_->ListStaleParts(older_than);
}
Result<std::vector<TmpListing>> MeteredBlobStore::SweepTemporaries(std::chrono::seconds older_than,
                                                                   bool dry_run) {
  return inner_->SweepTemporaries(older_than, dry_run);
}
Result<void> MeteredBlobStore::ForEachBlob(
    const std::function<Result<void>(const BlobListing&)>& fn) {
  return inner_->ForEachBlob(fn);
}
Result<void> MeteredBlobStore::CheckUsable() {
  return Timed(kCheck, [&] { return inner_->CheckUsable(); });
}

}  // namespace hangar::storage

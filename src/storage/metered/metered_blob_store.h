#pragma once
// MeteredBlobStore: a BlobStore that times every call of the store it wraps for /metrics
// (issue 17 §4): hangar_blob_store_duration_seconds{op} (histogram) and
// hangar_blob_store_errors_total{op}. Streams (Open's source, Create's writer) are timed
// to their opening only: their bytes flow at the client's pace.

#include <array>
#include <memory>

#include "metrics/metrics.h"
#include "storage/blob_store.h"

namespace hangar::storage {

class MeteredBlobStore final : public BlobStore {
 public:
  MeteredBlobStore(std::unique_ptr<BlobStore> inner, metrics::Registry& registry);

  Result<uint64_t> Stat(const Sha256& id) override;
  Result<std::unique_ptr<ByteSource>> Open(const Sha256& id, ByteRange range) override;
  Result<std::unique_ptr<BlobWriter>> Create(const Sha256& expected,
                                             std::optional<uint64_t> expected_size) override;
  Result<Sha256> Adopt(const std::string& path, uint64_t size) override;
  Result<void> Delete(const Sha256& id) override;
  Result<std::string> RedirectUrl(const Sha256& id, std::chrono::seconds ttl) override;
  Result<std::string> BeginParts(std::string_view key, uint64_t size, uint64_t part_size) override;
  Result<PartInfo> PutPart(std::string_view handle, uint64_t number, uint64_t offset, uint64_t size,
                           ByteSource& body, std::optional<Sha256> sha256) override;
  Result<std::string> PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                              std::chrono::seconds ttl) override;
  Result<std::vector<PartInfo>> ListParts(std::string_view handle) override;
  Result<void> CompleteParts(std::string_view handle, const Sha256& expected,
                             uint64_t size) override;
  Result<void> AbortParts(std::string_view handle) override;
  Result<std::vector<std::string>> ListStaleParts(std::chrono::seconds older_than) override;
  Result<std::vector<TmpListing>> SweepTemporaries(std::chrono::seconds older_than,
                                                   bool dry_run) override;
  Result<void> ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) override;
  Result<void> CheckUsable() override;

  BlobStore& inner() { return *inner_; }

 private:
  enum Op {
    kStat,
    kOpen,
    kCreate,
    kAdopt,
    kDelete,
    kRedirect,
    kBeginParts,
    kPutPart,
    kPartUrl,
    kListParts,
    kCompleteParts,
    kAbortParts,
    kCheck,
    kOps
  };
  struct Series {
    prometheus::Histogram* latency = nullptr;
    prometheus::Counter* errors = nullptr;
  };
  // Runs `call` (returning a Result) and records its time and outcome under `op`.
  template <typename F>
  auto Timed(Op op, F&& call) -> decltype(call());

  std::unique_ptr<BlobStore> inner_;
  std::array<Series, kOps> series_;
};

}  // namespace hangar::storage

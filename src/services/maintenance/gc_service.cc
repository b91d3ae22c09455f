#include "services/maintenance/gc_service.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <system_error>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {

namespace {

// A real run deletes expired uploads in batches of this many (UploadService's limit);
// a dry run counts up to kDryRunUploads of them.
constexpr int kUploadBatch = 1000;
constexpr int kDryRunUploads = 100000;

// "1.5 MiB", "812 B".
std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

// ForEachBlob's callback returns this to end the walk when the stop token fires.
Error Stopped() { return MakeError(ErrorCode::Unavailable, "gc stopped"); }

}  // namespace

std::string GcReport::Summary() const {
  auto part = [](const GcCount& c, const char* what, bool with_bytes) {
    std::string s = std::to_string(c.count) + " " + what;
    if (with_bytes && c.count) s += " (" + HumanBytes(c.bytes) + ")";
    return s;
  };
  std::string s = dry_run ? "gc (dry run, grace " : "gc (grace ";
  s += std::to_string(grace.count()) + " s): ";
  s += dry_run ? "would remove " : "removed ";
  s += part(blobs, "unreferenced blobs", true) + ", ";
  s += part(expired_uploads, "expired uploads", false) + ", ";
  s += part(orphan_staging, "orphan staging areas", true) + ", ";
  s += part(tmp_files, "temporary files", true) + ", ";
  s += part(oci_links, "unreferenced OCI links", false);
  s += "; kept " + std::to_string(blobs_referenced) + " referenced and " +
       std::to_string(blobs_in_grace) + " recent blobs";
  s += "; " + std::to_string(millis) + " ms";
  if (stopped) s += " (stopped early)";
  return s;
}

GcService::GcService(storage::BlobStore& blobs, db::LfsStore& links, UploadService& uploads,
                     GcOptions options)
    : blobs_(blobs), links_(links), uploads_(uploads), options_(std::move(options)) {}

int64_t GcService::Now() const { return options_.now ? options_.now() : NowUnix(); }

void GcService::List(GcReport& report, std::string item) const {
  if (report.items.size() < options_.max_listed) {
    report.items.push_back(std::move(item));
  } else {
    ++report.unlisted;
  }
}

Result<GcReport> GcService::Run(bool dry_run, std::optional<std::chrono::seconds> grace,
                                std::stop_token stop) {
  std::lock_guard lock(run_mu_);
  const int64_t started = NowUnixMillis();
  GcReport report;
  report.dry_run = dry_run;
  report.grace = grace.value_or(options_.grace);
  auto done = [&]() -> Result<GcReport> {
    report.stopped = stop.stop_requested();
    report.millis = NowUnixMillis() - started;
    Log("services")->info("{}", report.Summary());
    return std::move(report);
  };
  // Uploads first: their staging areas then no longer count as known in step 2.
  HANGAR_TRY(RemoveExpiredUploads(report, stop));
  if (stop.stop_requested()) return done();
  HANGAR_TRY(RemoveOrphanStaging(report, stop));
  if (stop.stop_requested()) return done();
  HANGAR_TRY(RemoveTmp(report));
  // Before the blob walk, so the blobs of pruned links can go in the same run.
  HANGAR_TRY(PruneOciLinks(report));
  HANGAR_TRY(RemoveBlobs(report, stop));
  return done();
}

Result<void> GcService::PruneOciLinks(GcReport& report) {
  if (!options_.oci || report.dry_run) return {};
  HANGAR_ASSIGN_OR_RETURN(int64_t n,
                          options_.oci->PruneUnreferencedLinks(Now() - report.grace.count()));
  report.oci_links.count = static_cast<uint64_t>(n);
  return {};
}

Result<void> GcService::RemoveExpiredUploads(GcReport& report, const std::stop_token& stop) {
  if (report.dry_run) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, uploads_.RemoveExpired(true, kDryRunUploads));
    report.expired_uploads.count = n;
    if (n) List(report, "uploads " + std::to_string(n) + " expired");
    return {};
  }
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, uploads_.RemoveExpired(false, kUploadBatch));
    report.expired_uploads.count += n;
    if (n < static_cast<size_t>(kUploadBatch) || stop.stop_requested()) return {};
  }
}

Result<void> GcService::RemoveOrphanStaging(GcReport& report, const std::stop_token& stop) {
  HANGAR_ASSIGN_OR_RETURN(auto stale, blobs_.ListStaleParts(report.grace));
  for (const auto& handle : stale) {
    if (stop.stop_requested()) return {};
    HANGAR_ASSIGN_OR_RETURN(bool known, uploads_.IsKnownStaging(handle));
    if (known) continue;  // its upload row decides (expiry, step 1)
    uint64_t bytes = 0;
    if (auto parts = blobs_.ListParts(handle)) {
      for (const auto& p : *parts) bytes += p.size;
    }
    if (report.dry_run) {
      List(report, "staging " + handle + " (" + std::to_string(bytes) + " bytes)");
    } else {
      HANGAR_TRY(blobs_.AbortParts(handle));
      Log("services")
          ->info("gc: removed staging area {} without an upload ({} bytes)", handle, bytes);
    }
    ++report.orphan_staging.count;
    report.orphan_staging.bytes += bytes;
  }
  return {};
}

Result<void> GcService::RemoveTmp(GcReport& report) {
  HANGAR_ASSIGN_OR_RETURN(auto swept, blobs_.SweepTemporaries(report.grace, report.dry_run));
  for (const auto& t : swept) {
    if (report.dry_run) List(report, "tmp " + t.name + " (" + std::to_string(t.size) + " bytes)");
    ++report.tmp_files.count;
    report.tmp_files.bytes += t.size;
  }
  return {};
}

Result<void> GcService::RemoveBlobs(GcReport& report, const std::stop_token& stop) {
  const int64_t cutoff = Now() - report.grace.count();
  bool stopped = false;
  auto walked = blobs_.ForEachBlob([&](const storage::BlobListing& b) -> Result<void> {
    if (stop.stop_requested()) {
      stopped = true;
      return Stopped();
    }
    // Inside the grace: perhaps published by an upload that has not linked it yet.
    if (b.modified > cutoff) {
      ++report.blobs_in_grace;
      return {};
    }
    HANGAR_ASSIGN_OR_RETURN(int64_t links, links_.CountLinks(b.id));
    if (links > 0) {
      ++report.blobs_referenced;
      return {};
    }
    if (report.dry_run) {
      List(report, "blob " + b.id.Hex() + " (" + std::to_string(b.size) + " bytes)");
    } else {
      auto deleted = blobs_.Delete(b.id);
      if (!deleted) {
        if (deleted.error().code == ErrorCode::BlobUnknown) return {};  // another GC's
        return std::move(deleted).error();
      }
      // See the header: an upload of these very bytes that linked them in the instant
      // between the check above and the delete lost its blob. Say so loudly.
      auto again = links_.CountLinks(b.id);
      if (again && *again > 0) {
        Log("services")
            ->error(
                "gc: blob {} was linked by an upload while being deleted; it is missing now: "
                "push it again",
                b.id.Hex());
      }
    }
    ++report.blobs.count;
    report.blobs.bytes += b.size;
    return {};
  });
  if (!walked && !stopped) return std::move(walked).error();
  if (!report.dry_run && report.blobs.count) {
    Log("services")
        ->info("gc: removed {} unreferenced blobs ({} bytes)", report.blobs.count,
               report.blobs.bytes);
  }
  return {};
}

}  // namespace hangar::services

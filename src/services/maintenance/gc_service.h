#pragma once
// GcService: garbage collection of stored bytes no one needs any more (issue #3 point 8;
// docs/gc.md): blobs no repo links, expired uploads, staging areas without an upload,
// and temporaries a crash or an abandoned client left in <data>/tmp. `hangar admin gc`
// runs it once; the periodic "gc" job of the job queue every gc.interval_s (cli/app.cc).
//
// What is removed, in this order, each only when untouched for longer than the grace:
//   0. OCI blob links (db::OciStore::PruneUnreferencedLinks) that no manifest of their
//      repo references: a layer pushed whose manifest never came, or whose manifests were
//      all deleted. The blob then counts as unreferenced in step 4 (CountLinks includes
//      OCI links) once no other repo or LFS link keeps it. Skipped in a dry run.
//   1. uploads whose expiry is past (UploadService::RemoveExpired: rows and staging; native
//      uploads and HF multipart LFS uploads alike),
//   2. staging areas of the blob store that no upload row names (BlobStore::
//      ListStaleParts, UploadService::IsKnownStaging): a crash between BeginParts and the
//      row's insert, a writer's staging on S3, or a repo deleted with its uploads (rows
//      cascade, staging does not),
//   3. temporaries of unfinished writes (BlobStore::SweepTemporaries: the local store's
//      files in <data>/tmp),
//   4. every blob whose last write is older than the grace and that no repo links
//      (LfsStore::CountLinks == 0, asked again right before each delete).
//
// Why the grace protects blobs in flight: every write path publishes the blob first and
// links it to its repo afterwards (LFS basic and multipart, native uploads, the commit
// API). Between the two the blob is unreferenced, but its modification time is fresh: a
// new blob was just renamed into place, and LocalBlobStore touches an existing blob when
// the same bytes are committed again. So a blob is only a candidate after it sat
// unreferenced for the whole grace, far longer than any publish→link gap. The grace
// must also exceed the longest an upload may stall between two writes (tmp files,
// staging areas): hence a default of one day.
//
// Remaining race (docs/gc.md): a client uploading the very bytes of a blob that has been
// unreferenced for the whole grace, whose commit *and* link both land between GC's last
// link check and its delete (microseconds), gets a link to a deleted blob. GC checks the
// links again after the delete and logs an error naming the blob; pushing it again
// restores it. A grace of 0 (`hangar admin gc --grace 0`) drops every protection of
// in-flight writes: use it only on a hub nobody writes to.
//
// Thread-safe: Run calls are serialized. Several processes (admin gc beside a server,
// replicas) may run it at once; each removal is idempotent.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/result.h"
#include "db/lfs_store.h"
#include "db/oci_store.h"
#include "services/uploads/upload_service.h"
#include "storage/blob_store.h"

namespace hangar::services {

// `grace` has no default of its own: config.h is its one source, and cli's App copies it
// (a test gives its own).
struct GcOptions {
  std::chrono::seconds grace{0};  // untouched for less, things stay (config gc.grace_s)
  db::OciStore* oci = nullptr;    // registry links to prune (step 0); null = none
  std::function<int64_t()> now;   // unix seconds; empty = NowUnix
  size_t max_listed = 1000;       // dry run: at most this many items listed
};

// How much of one kind GC removed (or, in a dry run, would remove).
struct GcCount {
  uint64_t count = 0;
  uint64_t bytes = 0;  // 0 where the store cannot tell (expired uploads)
};

// The outcome of one run.
struct GcReport {
  bool dry_run = false;
  std::chrono::seconds grace{0};
  GcCount expired_uploads;  // rows and their staging areas
  GcCount orphan_staging;   // staging areas without an upload row
  GcCount tmp_files;        // temporaries of unfinished writes (<data>/tmp files)
  GcCount blobs;            // unreferenced blobs past the grace
  GcCount oci_links;        // OCI blob links no manifest references (bytes: 0)
  // Blobs kept: older than the grace and linked by some repo / inside the grace (perhaps
  // in flight; their links are not asked for).
  uint64_t blobs_referenced = 0;
  uint64_t blobs_in_grace = 0;
  // Dry run: what would go, as "<kind> <name> (<bytes> bytes)" lines, at most
  // GcOptions::max_listed; `unlisted` counts the rest.
  std::vector<std::string> items;
  uint64_t unlisted = 0;
  bool stopped = false;  // Run returned early because its stop token fired
  int64_t millis = 0;    // duration

  // One line: "gc: removed 3 blobs (12 MiB), 1 expired upload, ...".
  std::string Summary() const;
};

class GcService {
 public:
  GcService(storage::BlobStore& blobs, db::LfsStore& links, UploadService& uploads,
            GcOptions options);

  // Runs one collection (see the file comment); with `dry_run` removes nothing and lists
  // what would go. `grace` replaces GcOptions::grace for this run (`--grace`). Returns
  // early, with report.stopped set, once `stop` fires. Logs the summary line.
  // Errors: Internal (storage or database failure; what was removed up to then stays
  // removed).
  Result<GcReport> Run(bool dry_run, std::optional<std::chrono::seconds> grace = std::nullopt,
                       std::stop_token stop = {});

 private:
  int64_t Now() const;
  void List(GcReport& report, std::string item) const;
  Result<void> RemoveExpiredUploads(GcReport& report, const std::stop_token& stop);
  Result<void> RemoveOrphanStaging(GcReport& report, const std::stop_token& stop);
  Result<void> RemoveTmp(GcReport& report);
  Result<void> RemoveBlobs(GcReport& report, const std::stop_token& stop);
  Result<void> PruneOciLinks(GcReport& report);

  storage::BlobStore& blobs_;
  db::LfsStore& links_;
  UploadService& uploads_;
  GcOptions options_;
  std::mutex run_mu_;  // one Run at a time
};

}  // namespace hangar::services

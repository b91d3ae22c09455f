#pragma once
// OciPush / OciPull: `hangar oci push` and `pull` without the command line. Moves files
// to and from any OCI Distribution registry in parts, `workers` at a time, with memory
// flat whatever the file size (parts stream from and to the file at their offsets).
// Layout of the artifact: oci_manifest.h. Design and measurements: docs/oci-client.md.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client/oci_client.h"
#include "client/progress.h"
#include "core/result.h"

namespace hangar::client {

// Defaults measured by bench/oci/oci_bench.sh (docs/benchmarks.md "Issue #5 — OCI
// push/pull").
inline constexpr uint64_t kDefaultOciPartSize = uint64_t{256} << 20;
inline constexpr int kDefaultOciWorkers = 4;

struct OciPushOptions {
  // Files, or directories (their files, recursively, named relative to the directory).
  std::vector<std::filesystem::path> paths;
  uint64_t part_size = kDefaultOciPartSize;        // bytes per layer (> 0)
  int workers = kDefaultOciWorkers;                // parts in flight
  std::map<std::string, std::string> annotations;  // manifest annotations (--annotation)
  // Annotate multi-part files with their whole sha256 (org.hangar.file.sha256,
  // --file-sha256): one more read and hash of each such file, on its own thread. Off by
  // default: the part digests already cover every byte (pull checks each part), and on a
  // machine with few cores the extra pass costs a third of a push's throughput. A
  // single-part file always carries it (its part's digest is the file's sha256).
  bool file_sha256 = false;
  // Where finished parts are recorded so an interrupted push resumes (one JSON file per
  // local file, keyed by its absolute path, size, mtime and the part size); "" = none.
  std::filesystem::path resume_dir;
  Progress* progress = nullptr;               // may be null
  std::function<void(std::string_view)> log;  // --verbose lines; may be null
};

struct OciPushResult {
  std::string manifest_digest;  // "sha256:…"
  size_t files = 0;
  size_t parts = 0;          // layers
  size_t parts_sent = 0;     // uploaded in this run
  size_t parts_skipped = 0;  // the registry already had them (HEAD)
  uint64_t bytes_sent = 0;
};

// Pushes the files as one artifact tagged `ref.tag` (oci.md §4, §5, §11.1): checks the
// credentials first (GET /v2/), then per part: HEAD when its digest is known from an
// earlier run (skip if present), else a streamed upload hashing as it sends; with
// `file_sha256`, each multi-part file's whole sha256 is computed on one more thread
// meanwhile; then the empty config and the manifest. Errors: BadRequest for a reference with a
// digest, a missing or unreadable path, two files with the same name; NotFound for a missing path;
// the registry's errors as OciClient reports them (prefixed with the file's name).
Result<OciPushResult> OciPush(OciClient& client, const OciRef& ref, const OciPushOptions& opts);

struct OciPullOptions {
  std::filesystem::path output = ".";  // created if missing
  int workers = kDefaultOciWorkers;
  Progress* progress = nullptr;
  std::function<void(std::string_view)> log;
};

struct OciPullResult {
  std::string manifest_digest;
  size_t files = 0;
  size_t parts = 0;
  size_t layers_skipped = 0;  // layers naming no file (neither Hangar's nor a title)
  uint64_t bytes = 0;
};

// Pulls the artifact `ref` into `opts.output`: each file written in place into a
// preallocated temporary file next to its target (parts by `workers` at their offsets,
// each part's sha256 checked as it arrives, so every byte written is verified), then,
// for a multi-part file whose manifest gives its whole sha256, that checked too (hashed
// in order on one more thread while later parts arrive), and the file renamed to its
// name. Nothing is written unless every name is safe. Errors: BadRequest for a name
// that escapes the output directory (SafeRelativePath, also through a symlink);
// ManifestInvalid/ManifestUnknown; DigestInvalid when a part or a file does not hash to
// what the manifest says; the registry's errors.
Result<OciPullResult> OciPull(OciClient& client, const OciRef& ref, const OciPullOptions& opts);

// ~/.cache/hangar/oci-push (or $XDG_CACHE_HOME/hangar/oci-push): the default resume_dir.
std::filesystem::path DefaultOciResumeDir();

}  // namespace hangar::client

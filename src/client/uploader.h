#pragma once
// Upload: `hangar upload` without the command line. Sends a local file or directory to a
// repo in one commit: LFS files through the native upload API (docs/uploads.md: parallel,
// resumable parts), the others inline in the NDJSON commit (docs/api.md).

#include <cstdint>
#include <filesystem>
#include <string>

#include "client/hub_client.h"
#include "client/progress.h"
#include "core/result.h"

namespace hangar::client {

// Defaults measured by bench/upload_matrix.sh (docs/benchmarks.md, docs/uploads.md "Client").
inline constexpr uint64_t kDefaultPartSize = uint64_t{64} << 20;
inline constexpr int kDefaultWorkers = 4;

struct UploadOptions {
  std::filesystem::path local_path;       // a file, or a directory (recursively, without .git/)
  std::string path_in_repo;               // "" = the file's name, or the repo root for a directory
  std::string revision = "main";          // the branch to commit to (created if missing)
  std::string commit_message;             // "" = "Upload <local_path> with hangar"
  uint64_t part_size = kDefaultPartSize;  // a hint: the server picks the real part size
  int workers = kDefaultWorkers;          // parts (and files being hashed) in flight
  Progress* progress = nullptr;           // may be null
};

struct UploadResult {
  std::string commit_url;
  size_t files = 0;            // files in the commit
  size_t lfs_files = 0;        // of which LFS
  uint64_t parts_sent = 0;     // parts PUT in this run
  uint64_t parts_resumed = 0;  // parts the server already had (an earlier, cut-short run)
};

// Creates the repo (and the branch) if it does not exist, hashes every file (streamed), asks
// preupload which files are LFS, uploads the LFS objects (resuming open uploads: only missing parts
// are sent; each part is retried 3 times on 5xx or transport errors), and commits.
// Errors: NotFound for a missing local path; the hub's errors as HttpError words them.
Result<UploadResult> Upload(const HubClient& hub, const RepoRef& repo, const UploadOptions& opts);

}  // namespace hangar::client

#pragma once
// Download: `hangar download` without the command line. Fetches files of one commit into a
// local directory: large files in parallel Range parts written in place and resumable,
// every file verified against the tree's digest before it appears under its name.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "client/hub_client.h"
#include "client/progress.h"
#include "client/uploader.h"
#include "core/result.h"

namespace hangar::client {

struct DownloadOptions {
  std::string revision = "main";          // branch, tag or commit; resolved once
  std::vector<std::string> paths;         // files or directories in the repo; empty = all
  std::filesystem::path local_dir;        // where the files go (created)
  uint64_t part_size = kDefaultPartSize;  // files of at least this size go in Range parts
  int workers = kDefaultWorkers;          // requests in flight
  Progress* progress = nullptr;           // may be null
};

struct DownloadResult {
  std::string commit;  // what the revision resolved to
  size_t files = 0;    // files downloaded (fully or the rest of them)
  size_t skipped = 0;  // already present with the right digest
  uint64_t bytes = 0;  // bytes received
};

// Resolves the revision, lists the tree, and downloads the selected files. Each file is
// written to "<file>.incomplete"; a file of several parts keeps "<file>.incomplete.parts"
// beside it, one finished part number a line, so that a rerun fetches only the others.
// The whole file is checked against the tree's LFS sha256 or git blob oid before it is
// renamed into place. Errors: the hub's (HttpError); EntryNotFound for a path that matches
// nothing; DigestInvalid when the bytes do not match (the partial file is removed).
Result<DownloadResult> Download(const HubClient& hub, const RepoRef& repo,
                                const DownloadOptions& opts);

}  // namespace hangar::client

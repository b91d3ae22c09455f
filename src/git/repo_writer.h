#pragma once
// Creating, moving and deleting bare repositories, and background maintenance
// (commit-graph). Functions are blocking and thread-safe; callers serialise operations on
// one repository (the repo service holds a per-repo lock).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/oid.h"
#include "core/result.h"

namespace hangar::git {

// Who made a commit, and when.
struct Signature {
  std::string name;
  std::string email;
  int64_t time = 0;        // Unix seconds
  int offset_minutes = 0;  // timezone offset from UTC
};

// Creates a bare repository at `path` (and missing parent directories) with HEAD →
// refs/heads/main, an initial commit on main holding `initial_files` (path → content;
// paths may contain '/' and become nested trees) and the server's git config
// (partial-clone filters, push options, commit-graph). The repository is built under a
// temporary name beside `path` and renamed into place, so a half-made repository is never
// visible. Returns the initial commit. Errors: Conflict when `path` exists, BadRequest
// for an invalid file path, Internal.
Result<Oid> InitBareRepo(const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& initial_files,
                         const Signature& author, std::string_view message);

// The refs under this prefix are the hub's own bookkeeping (mirrors, issue 18 §4):
// hidden from fetches and refused to pushes by the server config.
inline constexpr const char kHiddenRefs[] = "refs/hangar";

// Writes the server's git config into the bare repository at `repo_dir` (the settings
// InitBareRepo gives a new repository: partial-clone filters, push options,
// commit-graph, kHiddenRefs hidden). For repositories made by other means (an import),
// or made before a setting existed. Errors: Internal.
Result<void> ApplyServerConfig(const std::string& repo_dir);

// The .gitattributes the public hub writes into new repositories: LFS tracking for the
// usual weight, archive and data formats (git-lfs.md §11.8).
std::string_view InitialGitattributes();

// Runs `git commit-graph write --reachable --changed-paths` (Bloom filters speed up
// LastCommitTouching). While another writer holds the graph's lock (a push's refresh
// beside a maintenance), waits for it and runs again, within `timeout`.
// Errors: RepoNotFound, Unavailable (timeout), Internal.
Result<void> WriteCommitGraph(const std::string& path,
                              std::chrono::milliseconds timeout = std::chrono::minutes(10));

// Renames repository directory `from` to `to` (creating `to`'s parents). Errors:
// RepoNotFound when `from` is missing, Conflict when `to` exists, Internal.
Result<void> MoveRepo(const std::string& from, const std::string& to);

// Deletes the repository at `path`: first renamed to a hidden trash name beside it (so it
// disappears atomically under its name), then removed recursively. Errors: RepoNotFound,
// Internal (the trash copy may then remain, named ".trash-*").
Result<void> DeleteRepo(const std::string& path);

}  // namespace hangar::git

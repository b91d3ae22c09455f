#pragma once
// A search snapshot: the text files of one tree, inflated once into a flat file, so a
// content search (git::Grep) reads one file instead of resolving every blob's delta chain
// in a fresh git process. On the forge benchmark's 702-file tree `git grep` costs 50–140 ms
// of CPU depending on the pack; a search of the snapshot costs a few.
//
// Snapshots live in the bare repository, `<repo>/hangar-search/<tree oid>.snap`, keyed by
// the tree's oid (immutable). Format 2, all integers little-endian:
//   "HANGAR-SEARCH-2\n", then per file in git's tree order (the order git grep visits):
//   u32 path length, path bytes, u64 content length, content bytes; then the trailer
//   "HANGAR-SEARCH-END" and the u64 file count (a file cut anywhere is refused).
// Files git grep -I would skip as binary (a NUL in the first 8,000 bytes), symlinks and
// gitlinks are left out, as git grep leaves them. A tree whose text exceeds SnapshotLimits
// gets no snapshot (callers then use git grep). Writes go to a temporary file renamed
// into place; the newest kKeptSnapshots per repository are kept.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/oid.h"
#include "core/result.h"
#include "git/history.h"

namespace hangar::git {

struct SnapshotLimits {
  uint64_t max_bytes = 256ull << 20;  // text content in all
  uint64_t max_files = 500000;
};

// How many snapshots a repository keeps (the newest by modification time).
inline constexpr size_t kKeptSnapshots = 4;

// The snapshot of `commit`'s tree in `repo`, opened read-only (memory-mapped).
class SearchSnapshot {
 public:
  ~SearchSnapshot();
  SearchSnapshot(const SearchSnapshot&) = delete;
  SearchSnapshot& operator=(const SearchSnapshot&) = delete;

  // The snapshot of `commit`'s tree: opened when it exists, else written first (reading
  // every text blob of the tree). Errors: Unavailable (the tree is over `limits`; use git
  // grep), RevisionNotFound (no such commit), RepoNotFound, Internal (I/O; a malformed
  // snapshot file is removed and reported as Internal).
  static Result<std::unique_ptr<SearchSnapshot>> Open(const std::string& repo, const Oid& commit,
                                                      const SnapshotLimits& limits = {});

  // The snapshot of `commit`'s tree if it exists; nullptr if not. Errors: as Open.
  static Result<std::unique_ptr<SearchSnapshot>> OpenExisting(const std::string& repo,
                                                              const Oid& commit);

  // The lines matching `pattern`, as `git grep -n -I [-F|-E] [-i] -- <options.path>` would
  // list them under LC_ALL=C (POSIX extended regex with REG_NEWLINE matched within each
  // line, or a literal; -i folds ASCII only). The pattern must already be validated
  // (git::Grep does). nullopt when this search is left to git grep: a regex with a
  // backreference, or a line in scope over 16 KiB (regex) or 1 MiB (literal) — glibc
  // cannot be interrupted, git can be killed. Errors: BadRequest (a regex glibc cannot
  // compile, with its message), Unavailable (still searching at `deadline`).
  Result<std::optional<GrepResult>> Search(std::string_view pattern, const GrepOptions& options,
                                           std::chrono::steady_clock::time_point deadline) const;

  // Number of files and content bytes held.
  uint64_t files() const { return files_; }
  uint64_t bytes() const { return bytes_; }

 private:
  SearchSnapshot() = default;
  static Result<std::unique_ptr<SearchSnapshot>> Map(const std::string& path);

  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t body_end_ = 0;  // where the entries end and the trailer starts
  uint64_t files_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace hangar::git

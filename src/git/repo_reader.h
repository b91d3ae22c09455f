#pragma once
// RepoReader: reads refs, trees, blobs and commits of bare repositories with libgit2.
//
// Every method takes the bare repository's filesystem path ("…/acme/bert.git"), blocks,
// and is thread-safe. libgit2 handles are not shared between threads: each thread keeps
// a small LRU of open repositories (revalidated by the directory's inode, so a moved,
// deleted or recreated repository is reopened). Run calls on the worker pool.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/oid.h"
#include "core/result.h"

namespace hangar::git {

// A ref and the commit it peels to.
struct Ref {
  std::string name;  // full name: "refs/heads/main", "refs/tags/v1", "refs/pr/1"
  Oid target;        // peeled commit (annotated tags followed)
};

// One entry of a commit's tree (hf-api.md §4.1).
struct TreeEntry {
  std::string path;  // full path from the repo root, no leading '/'; "" for the root
  bool is_dir = false;
  Oid oid;            // blob id (of the pointer text for LFS files), tree id for dirs
  uint64_t size = 0;  // blob size in bytes; 0 for dirs and submodules
  uint32_t mode = 0;  // git file mode: 0100644, 0100755, 0120000, 040000, 0160000
};

// A commit, as the commits API and tree `lastCommit` need it (hf-api.md §6.8).
struct CommitInfo {
  Oid id;
  std::vector<Oid> parents;
  std::string author_name, author_email;
  int64_t author_time = 0;  // Unix seconds
  std::string committer_name, committer_email;
  int64_t committer_time = 0;  // Unix seconds
  std::string summary;         // first line of the message, without the newline
  std::string message;         // the full message
  Oid tree;
};

// Stateless apart from per-thread handle caches; one instance can serve the process.
class RepoReader {
 public:
  RepoReader();

  // The commit a client's revision names (hf-api.md §1.4 rule 4), tried in order:
  // "HEAD" → the default branch; 40 hex naming an existing commit; refs/heads/<rev>;
  // refs/tags/<rev> (annotated tags peeled); a full ref under refs/heads/, refs/tags/,
  // refs/pr/ or refs/convert/; a unique 5–39 hex commit prefix.
  // Errors: RevisionNotFound "Invalid rev id: <rev>" for anything else (including control
  // characters or ".."); RepoNotFound when `repo` is not a repository; Internal.
  Result<Oid> ResolveRevision(const std::string& repo, std::string_view revision);

  // All refs that peel to a commit, sorted by name (hf-api.md §6.7). Symbolic refs and
  // refs to trees or blobs are left out. Errors: RepoNotFound, Internal.
  Result<std::vector<Ref>> ListRefs(const std::string& repo);

  // The branch name HEAD points to ("main"), or nullopt when HEAD is detached or not
  // under refs/heads/. Errors: RepoNotFound, Internal.
  Result<std::optional<std::string>> DefaultBranch(const std::string& repo);

  // The entry at `repo_path` ("a/b.txt"; "" = the root tree, as a dir entry) in
  // `commit`. Errors: EntryNotFound, RevisionNotFound (no such commit), RepoNotFound.
  Result<TreeEntry> Lookup(const std::string& repo, const Oid& commit, std::string_view repo_path);

  // The entries below directory `dir` ("" = root) of `commit`, sorted by path bytewise
  // (hf-api.md §4.1). Non-recursive: direct children; recursive: every file and directory
  // below. Errors: EntryNotFound when `dir` is missing or not a directory,
  // RevisionNotFound, RepoNotFound, Internal.
  Result<std::vector<TreeEntry>> ListTree(const std::string& repo, const Oid& commit,
                                          std::string_view dir, bool recursive);

  // The bytes of blob `blob`. Errors: PayloadTooLarge when larger than `max_bytes`,
  // EntryNotFound when there is no such blob, RepoNotFound, Internal.
  Result<std::string> ReadBlob(const std::string& repo, const Oid& blob, uint64_t max_bytes);

  // A ByteSource over bytes [offset, offset+length) of blob `blob` (to its end when
  // `length` is nullopt or reaches past it); Size() is the byte count it will yield.
  // The blob is inflated into memory once (git blobs are small; LFS objects are not here).
  // Errors: RangeNotSatisfiable when offset > blob size, EntryNotFound, RepoNotFound.
  Result<std::unique_ptr<ByteSource>> OpenBlob(const std::string& repo, const Oid& blob,
                                               uint64_t offset, std::optional<uint64_t> length);

  // One commit. Errors: RevisionNotFound when `commit` is not a commit, RepoNotFound.
  Result<CommitInfo> ReadCommit(const std::string& repo, const Oid& commit);
  // Whether `commit` carries a signature (a gpgsig header); nothing is verified.
  // Errors: RevisionNotFound, RepoNotFound.
  Result<bool> IsSigned(const std::string& repo, const Oid& commit);

  // Commits reachable from `start`, newest first (git log's default order: by commit
  // time, children before parents), skipping `skip` and returning at most `limit`.
  // Errors: RevisionNotFound, RepoNotFound, Internal.
  Result<std::vector<CommitInfo>> Log(const std::string& repo, const Oid& start, size_t skip,
                                      size_t limit);

  // The newest commit reachable from `start` that changed `repo_path` (git log -1 --
  // path; uses commit-graph Bloom filters when written), or nullopt when none did.
  // "" = the root: `start` itself. Errors: RevisionNotFound, RepoNotFound, Unavailable
  // (git timed out), Internal.
  Result<std::optional<CommitInfo>> LastCommitTouching(const std::string& repo, const Oid& start,
                                                       std::string_view repo_path);
};

}  // namespace hangar::git

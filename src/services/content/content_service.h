#pragma once
// ContentService: what is in a repo at a revision — files (LFS pointers followed), trees,
// refs and history — with the immutable parts cached in memory (issue #2 point 8).
// hf-api.md §2–4, §6.7–6.8.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/oid.h"
#include "core/result.h"
#include "db/lfs_store.h"
#include "git/pointer.h"
#include "git/repo_reader.h"
#include "services/repo/repo_service.h"
#include "storage/blob_store.h"

namespace hangar::services {

// A tree entry with its LFS pointer, when the blob is one.
struct Entry {
  git::TreeEntry git;               // path, is_dir, oid, size (of the git blob)
  std::optional<git::Pointer> lfs;  // set for LFS pointer files
  // Bytes a client downloads: the LFS object's size for pointers, else the blob's.
  uint64_t Size() const { return lfs ? lfs->size : git.size; }
};

using EntryList = std::shared_ptr<const std::vector<Entry>>;

// Thread-safe; one per process. Calls block on git, the database and the blob store.
class ContentService {
 public:
  // `cache_entries` bounds each in-memory cache (entries, not bytes).
  ContentService(git::RepoReader& reader, storage::BlobStore& blobs, db::LfsStore& links,
                 size_t cache_entries);
  ~ContentService();

  // The commit `revision` names (hf-api.md §1.4). Errors: RevisionNotFound.
  Result<Oid> ResolveRevision(const RepoHandle& repo, std::string_view revision);

  // The file at `path` in `commit`. Errors: EntryNotFound (missing, or a directory).
  Result<Entry> Stat(const RepoHandle& repo, const Oid& commit, std::string_view path);

  // The bytes of `file`: the LFS object for pointers unless `raw` (then the pointer text).
  // `offset`/`length` select a window (already checked against Size()).
  // Errors: EntryNotFound when the LFS object is not stored or not linked to this repo.
  Result<std::unique_ptr<ByteSource>> Open(const RepoHandle& repo, const Entry& file, bool raw,
                                           uint64_t offset, std::optional<uint64_t> length);

  // Whether the LFS object of `file` is stored and linked to this repo.
  // Errors: EntryNotFound when it is not.
  Result<void> CheckLinked(const RepoHandle& repo, const Entry& file);

  // A URL serving the LFS object of `file` for `ttl` without Hangar (a presigned object
  // store URL, storage.download_mode = "redirect"), or "" when the blob store has none or
  // `file` is no LFS file. Errors: as CheckLinked.
  Result<std::string> RedirectUrl(const RepoHandle& repo, const Entry& file,
                                  std::chrono::seconds ttl);

  // Entries under `dir` ("" = root) in `commit`, sorted by path; recursive lists every
  // file and directory below. Cached per (repo, commit, dir, recursive).
  // Errors: EntryNotFound (missing dir, or a file).
  Result<EntryList> ListTree(const RepoHandle& repo, const Oid& commit, std::string_view dir,
                             bool recursive);

  // The entries that exist among `paths` (missing ones omitted; hf-api.md §4.2).
  Result<std::vector<Entry>> PathsInfo(const RepoHandle& repo, const Oid& commit,
                                       const std::vector<std::string>& paths);

  // The text of a small file (e.g. README.md), or nullopt if absent or over `max_bytes`.
  Result<std::optional<std::string>> ReadText(const RepoHandle& repo, const Oid& commit,
                                              std::string_view path, uint64_t max_bytes);

  Result<git::CommitInfo> Commit(const RepoHandle& repo, const Oid& id);
  // Last commit at or before `commit` touching `path`; nullopt if none.
  Result<std::optional<git::CommitInfo>> LastCommit(const RepoHandle& repo, const Oid& commit,
                                                    std::string_view path);
  Result<std::vector<git::Ref>> Refs(const RepoHandle& repo);
  Result<std::vector<git::CommitInfo>> Log(const RepoHandle& repo, const Oid& start, size_t skip,
                                           size_t limit);
  Result<uint64_t> CountCommits(const RepoHandle& repo, const Oid& start);

 private:
  struct Caches;
  // The pointer in blob `oid` of `size` bytes, if it is one (cached by blob oid).
  Result<std::optional<git::Pointer>> PointerOf(const RepoHandle& repo, const Oid& oid,
                                                uint64_t size);

  git::RepoReader& reader_;
  storage::BlobStore& blobs_;
  db::LfsStore& links_;
  std::unique_ptr<Caches> caches_;
};

}  // namespace hangar::services

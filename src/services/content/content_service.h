#pragma once
// ContentService: what is in a repo — files (LFS pointers followed), trees, revisions,
// refs, tags and history with diffs, blame, grep and archives — for both the HF API
// (hf-api.md §2–4, §6.7–6.8) and the web UI (issue #4). The one home of the read side of
// a repo's content (issue #14).
//
// Every call takes a RepoHandle the caller opened for reading (RepoService::Open decides
// who may read). Results that are pure functions of immutable objects (entries and trees
// at a commit, a commit's diff, a blame, a log page, grep results, commit counts,
// signature verdicts) are kept in bounded LRU caches, so a page seen before costs no git
// process; ref lists and tags are kept while the repo's refs stay unchanged.
//
// Thread-safe; one per process. Calls block (git, the database, the blob store): run them
// on the worker pool. Files: content_service.cc (files, trees, revisions),
// content_history.cc (commits, logs, blame, grep, archives), content_refs.cc (refs, tags).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/oid.h"
#include "core/result.h"
#include "db/lfs_store.h"
#include "git/history.h"
#include "git/pointer.h"
#include "git/repo_reader.h"
#include "services/lfs/missing_blobs.h"
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

struct ContentOptions {
  // Bound of each entry-counted cache of files, pointers and LFS links, at least 1; trees
  // hold five times as many entries (config cache.entries).
  size_t cache_entries = 0;
  // The server's GnuPG keyring (e.g. <data>/gpg), given to git as GNUPGHOME when it
  // verifies signatures; "" = signatures are never verified (LogEntry/TagInfo signature
  // stays unset).
  std::string gnupg_home;
  git::DiffLimits diff;            // bounds of a commit page's diff
  git::BlameLimits blame;          // files over these are refused (PayloadTooLarge)
  size_t max_log_limit = 200;      // largest History page; larger requests are lowered to it
  size_t max_grep_matches = 1000;  // largest GrepOptions::max_matches honoured
  // Cache bounds of history results (least recently used go first); 0 turns a cache off.
  // In bytes (approximate memory held) for results, in entries for the small ones.
  size_t commit_cache_bytes = 32 << 20;  // commit pages, by commit
  size_t blame_cache_bytes = 32 << 20;   // blames, by commit and path
  size_t log_cache_bytes = 16 << 20;     // log pages, by start commit, path, skip, limit
  size_t grep_cache_bytes = 8 << 20;     // grep results, by commit and query
  size_t refs_cache_bytes = 8 << 20;     // ref lists and tags, by repo and refs version
  // Blames and greps that miss the caches may cost seconds of git CPU each: at most this
  // many run at once, so they cannot take every worker thread; a request waits up to
  // heavy_wait for a slot, then gets TooManyRequests.
  int max_heavy = 2;
  std::chrono::milliseconds heavy_wait{10'000};
  size_t count_cache_entries = 4096;       // commit counts, by commit
  size_t signature_cache_entries = 65536;  // signature verdicts, by commit
};

// A result together with the commit the request's revision resolved to.
template <typename T>
struct AtCommit {
  Oid commit;
  T value;
};

// A repository archive being streamed.
struct ArchiveDownload {
  Oid commit;
  std::string filename;              // "bert-main.tar.gz": the repo name and the revision
  std::string content_type;          // "application/gzip" or "application/zip"
  std::unique_ptr<ByteSource> body;  // streamed from git archive; size unknown
};

class ContentService {
 public:
  ContentService(git::RepoReader& reader, storage::BlobStore& blobs, db::LfsStore& links,
                 ContentOptions options);
  ~ContentService();

  // Where LFS objects a repo links but the store lacks come from (a pull-through cache's
  // repos, docs/upstream.md): Open and RedirectUrl bring such an object first. Set before
  // serving; null: none (the object is EntryNotFound "missing from storage").
  void SetMissingBlobs(MissingBlobs* missing) { missing_ = missing; }

  // Errors of every call below, besides those it names: Unavailable (git timed out),
  // Internal.

  // --- Files and trees at a commit (content_service.cc) ---

  // The commit `revision` (branch, tag, full or abbreviated sha) names (hf-api.md §1.4).
  // Errors: RevisionNotFound ("Invalid rev id: v9", the public hub's wording).
  Result<Oid> ResolveRevision(const RepoHandle& repo, std::string_view revision);

  // The file at `path` in `commit`. Errors: EntryNotFound (missing, or a directory).
  Result<Entry> Stat(const RepoHandle& repo, const Oid& commit, std::string_view path);

  // The bytes of `file`: the LFS object for pointers unless `raw` (then the pointer text).
  // `offset`/`length` select a window (already checked against Size()).
  // Errors: EntryNotFound when the LFS object is not stored or not linked to this repo.
  Result<std::unique_ptr<ByteSource>> Open(const RepoHandle& repo, const Entry& file, bool raw,
                                           uint64_t offset, std::optional<uint64_t> length);

  // Whether the LFS object of `file` is linked to this repo, or (a pull-through cache's
  // repo) can be brought when read. Errors: EntryNotFound when neither.
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

  // --- History (content_history.cc) ---

  // The commit `id`, with its full message. Errors: RevisionNotFound.
  Result<git::CommitInfo> Commit(const RepoHandle& repo, const Oid& id);

  // Last commit at or before `commit` touching `path`; nullopt if none.
  Result<std::optional<git::CommitInfo>> LastCommit(const RepoHandle& repo, const Oid& commit,
                                                    std::string_view path);

  // Commits reachable from `start`, newest first, [skip, skip + limit), with full
  // messages (the HF API's commit listing, hf-api.md §6.8).
  Result<std::vector<git::CommitInfo>> Log(const RepoHandle& repo, const Oid& start, size_t skip,
                                           size_t limit);

  // How many commits `start` has in its history; cached by commit, and a head that
  // descends from the last one counted costs only its new commits.
  Result<uint64_t> CountCommits(const RepoHandle& repo, const Oid& start);

  // A page of the history of `revision`, newest first, with subjects (the web's commit
  // list); `path` ("" = whole repo) limits it to commits changing that file or
  // directory. `limit` is lowered to max_log_limit. With `verify_signatures` (and a
  // gnupg_home) each entry's signature is set. Errors: BadRequest (invalid path),
  // RevisionNotFound ("revision 'v9' not found in acme/bert", as for every call below
  // that takes a revision).
  Result<AtCommit<git::LogPage>> History(const RepoHandle& repo, std::string_view revision,
                                         std::string_view path, size_t skip, size_t limit,
                                         bool verify_signatures);

  // The commit `revision` names, its message, signature (when a gnupg_home is set) and
  // diff against its first parent, bounded by ContentOptions::diff.
  Result<AtCommit<std::shared_ptr<const git::CommitDetail>>> ShowCommit(const RepoHandle& repo,
                                                                        std::string_view revision);

  // Blame of file `path` at `revision`. Errors: BadRequest (invalid path, a directory, or
  // a binary file: core LooksBinary), EntryNotFound (no such file), PayloadTooLarge (over
  // ContentOptions::blame), TooManyRequests (no heavy slot within heavy_wait).
  Result<AtCommit<std::shared_ptr<const git::BlameResult>>> Blame(const RepoHandle& repo,
                                                                  std::string_view revision,
                                                                  std::string_view path);

  // Lines matching `pattern` in the tree of `revision`; options.max_matches is lowered to
  // max_grep_matches. Errors: BadRequest (empty or invalid pattern, invalid path),
  // TooManyRequests.
  Result<AtCommit<git::GrepResult>> Grep(const RepoHandle& repo, std::string_view revision,
                                         std::string_view pattern, git::GrepOptions options);

  // The tree of `revision` as a streamed archive whose entries sit under
  // "<name>-<revision>/" (characters other than [A-Za-z0-9._-] in the revision become '-').
  Result<ArchiveDownload> Archive(const RepoHandle& repo, std::string_view revision,
                                  git::ArchiveFormat format);

  // --- Refs and tags (content_refs.cc) ---

  // Every ref with the commit it names (annotated tags peeled), for the HF API's refs
  // listing (hf-api.md §6.7).
  Result<std::vector<git::Ref>> Refs(const RepoHandle& repo);

  // Every branch, tag and other ref with the object it names, sorted by name (not yet
  // described: see DescribedRefs). Kept while the refs stay as they are
  // (git::RefsVersion).
  Result<std::shared_ptr<const std::vector<git::RefInfo>>> RefInfos(const RepoHandle& repo);

  // Refs [first, first + count) of RefInfos(), described (git::DescribeRefs: commit,
  // time, subject, tagger); refs that name no commit are left out of `refs` but counted
  // in `total`. Descriptions are kept by object id (immutable).
  struct RefsPage {
    size_t total = 0;  // how many refs RefInfos() lists
    std::vector<git::RefInfo> refs;
  };
  Result<RefsPage> DescribedRefs(const RepoHandle& repo, size_t first, size_t count);

  // The annotated tag `name` with its signature verified (when a gnupg_home is set); kept
  // like RefInfos. Errors: BadRequest (invalid name), RevisionNotFound (no such annotated
  // tag).
  Result<std::shared_ptr<const git::TagInfo>> Tag(const RepoHandle& repo, std::string_view name);

  struct Caches;  // content_internal.h

 private:
  // The pointer in blob `oid` of `size` bytes, if it is one (cached by blob oid).
  Result<std::optional<git::Pointer>> PointerOf(const RepoHandle& repo, const Oid& oid,
                                                uint64_t size);
  // Whether the repo links the LFS object of `file` (true for no LFS file); a positive
  // answer is cached briefly.
  Result<bool> Linked(const RepoHandle& repo, const Entry& file);
  // CheckLinked, then a cache's object not linked yet is brought (MissingBlobs::Fill).
  Result<void> EnsureLinked(const RepoHandle& repo, const Entry& file);
  // ResolveRevision with the web's message, naming the revision and the repo.
  Result<Oid> At(const RepoHandle& repo, std::string_view revision);
  // One of the max_heavy slots, released when the Slot goes. Errors: TooManyRequests.
  struct SlotRelease {
    void operator()(std::counting_semaphore<1024>* s) const { s->release(); }
  };
  using Slot = std::unique_ptr<std::counting_semaphore<1024>, SlotRelease>;
  Result<Slot> HeavySlot();
  // Signatures of `entries` from the cache, verifying the missing ones in one git run.
  Result<void> FillSignatures(const std::string& git_path, std::vector<git::LogEntry>& entries);

  git::RepoReader& reader_;
  storage::BlobStore& blobs_;
  db::LfsStore& links_;
  const ContentOptions options_;
  std::unique_ptr<Caches> caches_;
  MissingBlobs* missing_ = nullptr;
  std::counting_semaphore<1024> heavy_slots_;
};

}  // namespace hangar::services

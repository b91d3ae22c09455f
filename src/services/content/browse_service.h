#pragma once
// BrowseService: the history a forge-style web UI shows (issue #4) — logs, commits with
// their diffs, blame, grep, archives, refs and tags — of a repo the caller may read.
//
// Every call opens the repo for reading first (RepoService::Open: a private repo is
// RepoNotFound to outsiders), resolves the client's revision (branch, tag, full or
// abbreviated commit sha; RevisionNotFound otherwise) to a commit, then runs one
// git/history function. Results that are pure functions of immutable objects (a commit's
// diff, a blame at a commit, a log page from a commit, grep results at a commit, commit
// counts, signature verdicts) are kept in small bounded LRU caches, so a page seen before
// costs no git process. Ref lists and tags are kept while the repo's refs stay unchanged.
//
// Thread-safe; one per process. Calls block (database, git): run them on the worker pool.

#include <chrono>
#include <cstdint>
#include <memory>
#include <semaphore>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/oid.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "git/history.h"
#include "git/repo_reader.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

struct BrowseOptions {
  // The server's GnuPG keyring (e.g. <data>/gpg), given to git as GNUPGHOME when it
  // verifies signatures; "" = signatures are never verified (LogEntry/TagInfo signature
  // stays unset).
  std::string gnupg_home;
  git::DiffLimits diff;            // bounds of a commit page's diff
  git::BlameLimits blame;          // files over these are refused (PayloadTooLarge)
  size_t max_log_limit = 200;      // largest log page; larger requests are lowered to it
  size_t max_grep_matches = 1000;  // largest GrepOptions::max_matches honoured
  // Cache bounds (least recently used results go first); 0 turns a cache off. In bytes
  // (approximate memory held) for results, in entries for the small ones.
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

class BrowseService {
 public:
  BrowseService(RepoService& repos, git::RepoReader& reader, BrowseOptions options);
  ~BrowseService();

  // Errors of every call below: RepoNotFound (missing, or private and `who` may not read
  // it), RevisionNotFound ("revision 'v9' not found in acme/bert"), Unavailable (git timed
  // out), Internal.

  // A page of the history of `revision`, newest first; `path` ("" = whole repo) limits it
  // to commits changing that file or directory. `limit` is lowered to max_log_limit.
  // With `verify_signatures` (and a gnupg_home) each entry's signature is set.
  // Errors: BadRequest (invalid path).
  Result<AtCommit<git::LogPage>> Log(const Principal& who, const RepoId& id,
                                     std::string_view revision, std::string_view path, size_t skip,
                                     size_t limit, bool verify_signatures);

  // The commit `revision` names, its message, signature (when a gnupg_home is set) and
  // diff against its first parent, bounded by BrowseOptions::diff.
  Result<AtCommit<std::shared_ptr<const git::CommitDetail>>> Commit(const Principal& who,
                                                                    const RepoId& id,
                                                                    std::string_view revision);

  // Blame of file `path` at `revision`. Errors: BadRequest (invalid path, or a
  // directory), EntryNotFound (no such file), PayloadTooLarge (over BrowseOptions::blame).
  Result<AtCommit<std::shared_ptr<const git::BlameResult>>> Blame(const Principal& who,
                                                                  const RepoId& id,
                                                                  std::string_view revision,
                                                                  std::string_view path);

  // Lines matching `pattern` in the tree of `revision`; options.max_matches is lowered to
  // max_grep_matches. Errors: BadRequest (empty or invalid pattern, invalid path).
  Result<AtCommit<git::GrepResult>> Grep(const Principal& who, const RepoId& id,
                                         std::string_view revision, std::string_view pattern,
                                         git::GrepOptions options);

  // The tree of `revision` as a streamed archive whose entries sit under
  // "<name>-<revision>/" (characters other than [A-Za-z0-9._-] in the revision become '-').
  Result<ArchiveDownload> Archive(const Principal& who, const RepoId& id, std::string_view revision,
                                  git::ArchiveFormat format);

  // Every branch, tag and other ref with the object it names, sorted by name (not yet
  // described: see RefsPage). Kept while the refs stay as they are (git::RefsVersion).
  Result<std::shared_ptr<const std::vector<git::RefInfo>>> Refs(const Principal& who,
                                                                const RepoId& id);

  // Refs [first, first + count) of Refs(), described (git::DescribeRefs: commit, time,
  // subject, tagger); refs that name no commit are left out of `refs` but counted in
  // `total`. Descriptions are kept by object id (immutable). Errors: as Refs.
  struct RefsPage {
    size_t total = 0;  // how many refs Refs() lists
    std::vector<git::RefInfo> refs;
  };
  Result<RefsPage> DescribedRefs(const Principal& who, const RepoId& id, size_t first,
                                 size_t count);

  // The annotated tag `name` with its signature verified (when a gnupg_home is set); kept
  // like Refs. Errors: BadRequest (invalid name), RevisionNotFound (no such annotated tag).
  Result<std::shared_ptr<const git::TagInfo>> Tag(const Principal& who, const RepoId& id,
                                                  std::string_view name);

  // How many commits `revision` has in its history (for the repo home page).
  Result<AtCommit<uint64_t>> CommitCount(const Principal& who, const RepoId& id,
                                         std::string_view revision);

 private:
  struct Caches;
  struct Resolved {
    RepoHandle repo;
    Oid commit;
  };
  Result<Resolved> Resolve(const Principal& who, const RepoId& id, std::string_view revision);
  // One of the max_heavy slots, released when the Slot goes. Errors: TooManyRequests.
  struct SlotRelease {
    void operator()(std::counting_semaphore<1024>* s) const { s->release(); }
  };
  using Slot = std::unique_ptr<std::counting_semaphore<1024>, SlotRelease>;
  Result<Slot> HeavySlot();
  // Signatures of `entries` from the cache, verifying the missing ones in one git run.
  Result<void> FillSignatures(const std::string& git_path, std::vector<git::LogEntry>& entries);

  RepoService& repos_;
  git::RepoReader& reader_;
  const BrowseOptions options_;
  std::unique_ptr<Caches> caches_;
  std::counting_semaphore<1024> heavy_slots_;
};

}  // namespace hangar::services

#pragma once
// RepoStorageService: a repo's history and storage management (issue 19 §4,
// docs/lfs-files.md) — super_squash_history (hf-api.md §6.9), list_lfs_files and
// permanently_delete_lfs_files (§6.12). Rules only; git rewrites are git/history_rewrite.h,
// the links and the purge log db::LfsStore's. The bytes of an object no repo links any
// more are removed by GC (services/maintenance/gc_service.h).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/sha256.h"
#include "db/lfs_store.h"
#include "git/lfs_scan.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// The most objects one purge takes (huggingface_hub sends batches of 1000).
inline constexpr size_t kMaxPurgeObjects = 1000;

// One LFS object of a repo: its link, and where its history first has it (none when no
// commit of any ref points at it any more).
struct LfsFile {
  db::LfsLink link;
  std::optional<git::LfsAppearance> first;
};

struct LfsFilePage {
  std::vector<LfsFile> items;  // by object id
  std::string next_cursor;     // "" on the last page
};

// Thread-safe; one per process. Calls block (database, git).
class RepoStorageService {
 public:
  RepoStorageService(RepoService& repos, ContentService& content, db::LfsStore& lfs,
                     std::chrono::milliseconds scan_timeout = std::chrono::minutes(2));

  // Replaces the history of branch `branch` (a short name) by one commit of its tree with
  // `message` ("" = "Super-squash branch '<branch>'"), by `who`. Returns the commit. Needs
  // Write. Errors: as RepoService::Open with Write; RevisionNotFound (no such branch);
  // BadRequest (a message over 64 KiB or not UTF-8); Conflict (it moved meanwhile).
  Result<Oid> SuperSquash(const Principal& who, const RepoId& id, const std::string& branch,
                          const std::string& message);

  // The repo's LFS objects, `limit` per page after `cursor` (an object id; "" = the
  // first). Needs Write. Errors: as RepoService::Open with Write; BadRequest (a malformed
  // cursor); Unavailable (the history scan timed out).
  Result<LfsFilePage> ListLfsFiles(const Principal& who, const RepoId& id,
                                   const std::string& cursor, int limit);

  // Deletes `oids` from the repo for good: with `rewrite_history` every ref's history is
  // rewritten so that no commit keeps a pointer to them (new commit ids, refs moved), then
  // they are unlinked (GC removes their bytes once no repo links them); without it they
  // are unlinked and the pointers stay, dangling. Recorded in the repo's purge log, which
  // it returns. Needs Admin. Errors: as RepoService::Open with Admin; BadRequest (none, or
  // over kMaxPurgeObjects); NotFound (an object the repo does not hold: nothing changes);
  // Conflict (a ref moved during the rewrite); Unavailable (the scan timed out).
  Result<db::LfsPurgeRecord> Purge(const Principal& who, const RepoId& id,
                                   const std::vector<Sha256>& oids, bool rewrite_history);

  // The repo's purge log, newest first. Needs Admin.
  Result<std::vector<db::LfsPurgeRecord>> Purges(const Principal& who, const RepoId& id);

 private:
  // Every ref's commit, for the history scans.
  Result<std::vector<Oid>> Tips(const RepoHandle& repo);

  RepoService& repos_;
  ContentService& content_;
  db::LfsStore& lfs_;
  const std::chrono::milliseconds scan_timeout_;
};

}  // namespace hangar::services

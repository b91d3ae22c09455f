#pragma once
// CommitService: commits made over HTTP rather than git push (hf-api.md §7.1 preupload,
// §7.2 commit; issue #3): which files go through LFS, and building a commit from file
// operations on a branch head. No HTTP here: api/hf/commit_handlers.cc parses NDJSON and
// base64 and renders JSON.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/oid.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/sha256.h"
#include "git/commit_builder.h"
#include "services/content/content_service.h"
#include "services/lfs/lfs_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// Files of this size or larger always go through LFS (hf-api.md §7.1).
inline constexpr uint64_t kLfsSizeThreshold = 10 * 1024 * 1024;

// One file a client is about to upload (§7.1 request).
struct PreuploadFile {
  std::string path;
  uint64_t size = 0;
  std::string sample;  // first bytes of the file (decoded)
};

// The answer for one file (§7.1 response).
struct PreuploadAnswer {
  std::string path;
  bool lfs = false;
  std::optional<Oid> oid;  // git blob id of the file already at that path
};

// One operation of a commit (§7.2).
struct CommitOperation {
  enum class Kind { File, LfsFile, DeletedFile, DeletedFolder, CopyFile };
  Kind kind = Kind::File;
  std::string path;
  std::string content;  // File: the bytes
  Sha256 lfs_oid;       // LfsFile: the object, already uploaded and linked to the repo
  // LfsFile: its size; absent when Python copies an LFS file (hf-api.md §7.5 "Copies"),
  // then the linked object's size is used.
  std::optional<uint64_t> lfs_size;
  // CopyFile (a Hangar extension, docs/api.md): the file `src_path` at `src_revision`
  // (absent: the branch committed to) is added at `path`; an LFS file's pointer is
  // copied, so the object is shared, not duplicated.
  std::string src_path;
  std::optional<std::string> src_revision;
};

struct CommitInput {
  std::string summary;
  std::string description;
  std::optional<Oid> parent_commit;
  std::vector<CommitOperation> operations;
  bool create_pr = false;  // §7.6: store the commit under a new refs/pr/<n>
};

// What a commit made (§7.2 response).
struct CommitOutcome {
  Oid commit;
  std::optional<int> pull_request;  // n of refs/pr/<n> when create_pr was asked
};

// A branch to create (§6.5 request body).
struct BranchInput {
  std::string name;                           // short name, '/' allowed
  std::optional<std::string> starting_point;  // a revision; none = the default branch's head
  bool overwrite = false;                     // JS: move an existing branch
  bool empty = false;                         // JS emptyBranch (not supported)
};

// Whether `path` matches a `pattern filter=lfs` line of `gitattributes` (a subset of
// gitattributes(5): patterns without '/' match the file name at any depth, others the
// whole path with fnmatch(3) FNM_PATHNAME; "dir/**" matches everything below dir; later
// lines win, and "-filter" / "!filter" turn LFS off).
bool MatchesLfsAttribute(std::string_view gitattributes, std::string_view path);

// Who records the pull requests that `create_pr` commits open (hf-api.md §7.6): the
// discussions service (issue 19 §2) gives each its number and its discussion.
class PullRequestOpener {
 public:
  virtual ~PullRequestOpener() = default;
  // Opens a pull request of `repo` by `who` from branch `base` (short name) whose ref
  // refs/pr/<n> it creates at commit `head`, titled `title`, `description` its first
  // comment ("" none). Returns n. Errors: Conflict (no number could be taken), the store's.
  virtual Result<int> OpenPullRequest(const Principal& who, const RepoHandle& repo,
                                      const std::string& base, const Oid& head,
                                      const std::string& title, const std::string& description) = 0;
  // Whether pull request `num` of `repo` takes commits. Errors: BadRequest (it is closed
  // or merged).
  virtual Result<void> CheckOpen(const RepoHandle& repo, int num) = 0;
};

// Thread-safe; one per process. Calls block (git, database).
class CommitService {
 public:
  CommitService(RepoService& repos, ContentService& content, LfsService& lfs);

  // Who opens the pull requests of create_pr commits; without one, only refs/pr/<n> is
  // made. Set once, before the first request; `opener` outlives this service.
  void SetPullRequestOpener(PullRequestOpener* opener) { opener_ = opener; }

  // §7.1: for each file, "lfs" when the revision's .gitattributes (or `git_attributes`,
  // when given) routes it to LFS, its size is ≥ kLfsSizeThreshold or its sample holds a
  // NUL byte; and the blob id of the existing file. Needs write access.
  // Errors: as RepoService::Open with Write, RevisionNotFound, BadRequest (bad path).
  Result<std::vector<PreuploadAnswer>> Preupload(const Principal& who, const RepoId& id,
                                                 std::string_view revision,
                                                 const std::vector<PreuploadFile>& files,
                                                 const std::optional<std::string>& git_attributes);

  // §7.2: commits `input` on branch `branch` as `who` (author and committer
  // "<name> <name@users.noreply.hangar>"), then updates repo metadata. Returns the commit.
  // Errors: as RepoService::Open with Write; BadRequest (empty summary, invalid path, a
  // path both file and folder, no operations); RevisionNotFound (not a branch);
  // Unprocessable (LFS object not uploaded/linked, or another size); EntryNotFound
  // (deleting a missing path); PreconditionFailed (stale parent_commit); Conflict.
  // With input.create_pr (§7.6) the commit is made on the branch head but stored under a
  // new refs/pr/<n> (opened as a pull request by the PullRequestOpener), the branch
  // untouched; a commit to refs/pr/<n> is told to the push listeners as a push is. `input` is taken
  // by value so that inline file contents move into the commit rather than being copied.
  Result<CommitOutcome> Commit(const Principal& who, const RepoId& id, std::string_view branch,
                               CommitInput input);

  // Branches and tags (§6.5, §6.6; commit_service_refs.cc). Each needs write access and
  // fails as RepoService::Open with Write first; names are checked with
  // git::IsValidShortRefName (BadRequest).

  // Creates refs/heads/<in.name> at the head of in.starting_point. Errors: BadRequest
  // (emptyBranch), RevisionNotFound (bad starting point), Conflict (exists, no overwrite).
  Result<Oid> CreateBranch(const Principal& who, const RepoId& id, const BranchInput& in);
  // Errors: Forbidden (the default branch), RevisionNotFound (no such branch).
  Result<void> DeleteBranch(const Principal& who, const RepoId& id, std::string_view name);
  // Tags the commit `revision` names as `tag`: annotated (tagger `who`) when `message` is
  // given, else lightweight. Returns the commit. Errors: RevisionNotFound, Conflict.
  Result<Oid> CreateTag(const Principal& who, const RepoId& id, std::string_view revision,
                        std::string_view tag, const std::optional<std::string>& message);
  // Errors: RevisionNotFound (no such tag).
  Result<void> DeleteTag(const Principal& who, const RepoId& id, std::string_view tag);

 private:
  // One operation of a commit on `branch` of `repo` as the tree change it makes (its path
  // checked; a file's content moved out of `op`). Errors: as Commit.
  Result<git::TreeChange> Change(const RepoHandle& repo, const std::string& branch,
                                 CommitOperation& op);

  RepoService& repos_;
  ContentService& content_;
  LfsService& lfs_;
  PullRequestOpener* opener_ = nullptr;
};

}  // namespace hangar::services

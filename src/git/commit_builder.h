#pragma once
// Server-side commits (hf-api.md §7.2): a new tree built from a branch head with files
// added, replaced and deleted, written as a commit and moved onto the branch with a
// compare-and-swap. Blocking and thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "core/oid.h"
#include "core/result.h"
#include "git/repo_writer.h"

namespace hangar::git {

// One change to the tree. Paths are repo paths ("a/b.txt"), already validated.
struct TreeChange {
  enum class Kind { Upsert, DeleteFile, DeleteFolder };
  Kind kind = Kind::Upsert;
  std::string path;
  std::string content;      // blob bytes for Upsert (LFS files: the pointer text)
  std::optional<Oid> blob;  // Upsert: an existing blob of the repo instead of `content`
                            // (copies); EntryNotFound when the repo lacks it
};

struct CommitRequest {
  std::string branch;                  // short name, e.g. "main", or a full ref
                                       // outside refs/heads/, e.g. "refs/pr/1"
  std::optional<Oid> expected_parent;  // when set, the branch must still point here
  std::vector<TreeChange> changes;     // applied in order
  Signature author;                    // also the committer
  std::string message;
  // Write the commit on the head but leave the branch where it is (create_pr, §7.6).
  bool detached = false;
};

// Applies `req.changes` to the tree of the head of refs/heads/<branch> (or of <branch>
// itself when it starts with "refs/"), writes the blobs,
// trees and commit, and moves the branch with a compare-and-swap. When the branch moved
// meanwhile and no expected_parent was given, rebuilds on the new head and retries a few
// times with jittered growing waits. Returns the new commit. With `req.detached` the
// branch is only read: the caller stores the commit under another ref.
// Errors: RevisionNotFound (no such branch), PreconditionFailed (expected_parent is not
// the head), EntryNotFound (deleting a missing file or folder), BadRequest (a path that is
// both a file and a folder), Conflict (the branch kept moving), Internal.
Result<Oid> CommitChanges(const std::string& repo_path, const CommitRequest& req);

// Writes a parentless commit of the empty tree (an empty branch's first commit, hf-api.md
// §6.5 emptyBranch) and returns it; no ref is touched. Errors: BadRequest (author), Internal.
Result<Oid> CommitEmptyRoot(const std::string& repo_path, const Signature& author,
                            const std::string& message);

}  // namespace hangar::git

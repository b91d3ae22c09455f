#pragma once
// Pull requests' git side (issue 19 §2, docs/discussions.md): the commits a pull request
// adds, whether it merges cleanly, and the merge itself — a fast-forward when the target
// has not moved since the pull request started, else a merge commit of the two heads,
// refused when a file conflicts. Read and written in process with libgit2; blocking and
// thread-safe (each thread its own cached handle, git2_util.h).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/oid.h"
#include "core/result.h"
#include "git/history.h"
#include "git/repo_writer.h"

namespace hangar::git {

// What merging `head` into `base` would do.
struct MergeCheck {
  bool up_to_date = false;             // head is already reachable from base: nothing to merge
  bool fast_forward = false;           // base is an ancestor of head: the ref just moves
  bool unrelated = false;              // no common history: MergeInto refuses
  std::vector<std::string> conflicts;  // paths both sides changed differently, sorted
};

// The merge of commit `head` into commit `base`, as MergeInto would make it, without
// writing anything. Errors: RevisionNotFound (either commit missing), Internal.
Result<MergeCheck> CheckMerge(const std::string& repo_path, const Oid& base, const Oid& head);

// Merges commit `head` into `refname` (full, e.g. "refs/heads/main"), which must still
// point at `base`: moves it to `head` when that is a fast-forward, else writes a merge
// commit (parents base and head, the three-way merge of their trees, by `author` with
// `message`) and moves it there; a `head` already in base's history leaves the ref alone.
// Returns the ref's new target. Errors: Conflict (a file conflicts — the message lists
// them —, the histories are unrelated, or `refname` no longer points at `base`),
// RevisionNotFound, BadRequest (author), Internal.
Result<Oid> MergeInto(const std::string& repo_path, const std::string& refname, const Oid& base,
                      const Oid& head, const Signature& author, const std::string& message);

// The commits reachable from `head` and from none of `hide` (commits the repo lost are
// skipped), oldest first; at most the `limit` newest of them. Errors: RevisionNotFound,
// Internal.
Result<std::vector<LogEntry>> CommitsSince(const std::string& repo_path,
                                           const std::vector<Oid>& hide, const Oid& head,
                                           size_t limit);

}  // namespace hangar::git

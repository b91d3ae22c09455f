#pragma once
// Creating and deleting refs (branches, tags, pull-request refs) with libgit2
// (hf-api.md §6.5, §6.6, §7.6). Every write is atomic (libgit2 lock files); functions are
// blocking and thread-safe.

#include <string>
#include <string_view>

#include "core/oid.h"
#include "core/result.h"
#include "git/repo_writer.h"

namespace hangar::git {

// Whether `name` is acceptable as a branch or tag short name: a valid git ref name once
// prefixed with refs/heads/ (git check-ref-format rules, via libgit2), '/' allowed, and
// not starting with '-' nor equal to "HEAD" or "@" (as `git branch` refuses them), and not
// starting with "refs/" (it would read as another kind of ref).
bool IsValidShortRefName(std::string_view name);

// Points `refname` (full, e.g. "refs/heads/dev") at commit `target`. When `overwrite` is
// false an existing ref is left alone. Errors: Conflict (exists, and !overwrite),
// RevisionNotFound (no such commit), BadRequest (invalid name), Internal.
Result<void> CreateRef(const std::string& repo_path, const std::string& refname, const Oid& target,
                       bool overwrite);

// Writes an annotated tag object named `name` on commit `target` and refs/tags/<name>.
// Errors: Conflict (tag exists), RevisionNotFound, BadRequest (invalid name or tagger),
// Internal.
Result<Oid> CreateAnnotatedTag(const std::string& repo_path, const std::string& name,
                               const Oid& target, const Signature& tagger,
                               const std::string& message);

// Deletes `refname` (full) if it still has the value read first. Errors: RevisionNotFound
// (no such ref), Conflict (it moved meanwhile), Internal.
Result<void> DeleteRef(const std::string& repo_path, const std::string& refname);

// The largest pull-request number: refs/pr/<n> past it (or with leading zeros) are not
// pull requests Hangar made, and are not counted.
inline constexpr int kMaxPullRequestNumber = 999'999'999;

// Creates refs/pr/<n> at `target`, n = the larger of `at_least` and 1 + the highest
// existing pull-request number (one more on a race with another creator). Returns n.
// Errors: Conflict (also past kMaxPullRequestNumber), Internal.
Result<int> CreatePullRequestRef(const std::string& repo_path, const Oid& target, int at_least = 1);

// The highest n of the repo's refs/pr/<n>, 0 when there are none. Errors: Internal.
Result<int> HighestPullRequestRef(const std::string& repo_path);

}  // namespace hangar::git

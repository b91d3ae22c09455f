#pragma once
// Rewriting a repo's history (issue 19 §4, docs/lfs-files.md): a branch squashed into one
// commit (super-squash, hf-api.md §6.9), and every ref's history rewritten without some
// files (LFS pointers whose objects are deleted for good). In process with libgit2; every
// ref moves with a compare-and-swap. Blocking and thread-safe.

#include <string>
#include <unordered_set>
#include <vector>

#include "core/oid.h"
#include "core/result.h"
#include "git/repo_writer.h"

namespace hangar::git {

// Replaces the history of `refname` (full, e.g. "refs/heads/main"), which must point at
// `head`, by one parentless commit of head's tree, by `author` with `message`. Returns it.
// Errors: Conflict (the ref moved), RevisionNotFound, BadRequest (author), Internal.
Result<Oid> SquashInto(const std::string& repo_path, const std::string& refname, const Oid& head,
                       const Signature& author, const std::string& message);

// A ref a rewrite moved.
struct RefRewrite {
  std::string name;  // full name
  Oid from, to;      // commits (an annotated tag's target when `name` is a tag)
};

// Rewrites the history of every ref under refs/ so that no tree holds a blob of `drop`:
// each commit that has one anywhere in its tree, and every commit after it, gets a new id
// (author, committer and message kept); an annotated tag whose commit changed is written
// again (tagger and message kept). Refs whose history holds none stay. Returns the refs
// moved. Errors: Conflict (a ref moved meanwhile: the refs already moved stay moved, each
// to a commit of the same content), Internal.
Result<std::vector<RefRewrite>> RewriteWithout(const std::string& repo_path,
                                               const std::unordered_set<Oid>& drop);

}  // namespace hangar::git

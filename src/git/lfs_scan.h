#pragma once
// Finding the LFS objects a range of history refers to (git-lfs.md §11.7): the pointer
// files among the blobs reachable from some commits and not from others. Mirrors use it to
// learn which objects a fetch brought in (issue 18 §4, docs/mirrors.md).

#include <chrono>
#include <string>
#include <vector>

#include "core/oid.h"
#include "core/result.h"
#include "git/pointer.h"

namespace hangar::git {

// The LFS pointers (ParsePointer) among the blobs reachable from `tips` and not from
// `exclude` in bare repository `repo`, each oid once, in the order git lists them. Only
// blobs shorter than kMaxPointerSize are read (`git rev-list --objects
// --filter=blob:limit`, then `git cat-file`), all within `timeout`. Errors: RepoNotFound,
// RevisionNotFound (a tip or exclusion is not in the repository), Unavailable (timeout),
// Internal.
Result<std::vector<Pointer>> PointersBetween(const std::string& repo, const std::vector<Oid>& tips,
                                             const std::vector<Oid>& exclude,
                                             std::chrono::milliseconds timeout);

// Where an LFS object first appears in a repo's history.
struct LfsAppearance {
  Pointer pointer;
  Oid blob;                // the pointer file's blob where it first appears
  std::vector<Oid> blobs;  // every pointer file's blob naming the object, `blob` first
  std::string path;        // where that commit put it
  Oid commit;        // the oldest commit (topological order) that added or changed a file to it
  int64_t time = 0;  // that commit's committer time, unix seconds
};

// The LFS objects reachable from `tips`, each once with its first appearance, in the order
// they appeared (`git log --reverse --topo-order --raw`, merges against their first parent, then
// the pointer-sized blobs read as PointersBetween does), all within `timeout`. Pointers only ever
// renamed or copied are found at their first path. Errors: as PointersBetween.
Result<std::vector<LfsAppearance>> LfsAppearances(const std::string& repo,
                                                  const std::vector<Oid>& tips,
                                                  std::chrono::milliseconds timeout);

}  // namespace hangar::git

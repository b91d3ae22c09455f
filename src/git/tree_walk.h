#pragma once
// Internal to src/git: walking libgit2 trees into TreeEntry lists (RepoReader::ListTree).

#include <git2.h>

#include <string>
#include <vector>

#include "core/result.h"
#include "git/repo_reader.h"

namespace hangar::git::internal {

// Fills is_dir, oid, mode and size of `out` from `e`; blob sizes come from the object
// header (git_odb_read_header), never from inflating the blob.
void FillEntry(git_odb* odb, const git_tree_entry* e, TreeEntry& out);

// The number of entries below `tree`, all levels. Errors: Internal.
Result<size_t> CountEntries(git_repository* repo, const git_tree* tree);

// Appends the entries of `tree`, whose path is `prefix` ("" or ending in '/'), to `out`
// in bytewise order of their full paths; with `recursive`, directories are followed.
// `prefix` is used as scratch space and restored. Errors: Internal.
Result<void> WalkTree(git_repository* repo, git_odb* odb, const git_tree* tree, std::string& prefix,
                      bool recursive, std::vector<TreeEntry>& out);

}  // namespace hangar::git::internal

#pragma once
// PathLog: the commits `git log <start> -- <path>` prints, found by walking the
// commit-graph (git/commit_graph.h) instead of running git, so that a path touched by few
// commits costs a Bloom filter probe per commit rather than a tree diff (issue #4).
//
// Same commits, same order as git 2.39's default log: commits popped newest committer
// time first (equal times: first queued first), each shown unless TREESAME to a parent
// (default history simplification, no --full-history / --follow):
//   - root commit: shown iff `path` exists in its tree;
//   - one parent: shown iff the entry at `path` (oid and mode, or absence) differs;
//   - merge: TREESAME to some parent → hidden, and only the first such parent is walked;
//     else shown and every parent walked.
// The first-parent comparison is skipped when the commit's Bloom filter says "definitely
// not changed"; other comparisons read trees with libgit2. Commits missing from the graph
// (pushed after it was written) are read with libgit2.
//
// Blocks; thread-safe (libgit2 handles are per thread). Run on the worker pool.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/oid.h"

namespace hangar::git {

// The commits `git log <start> -- <path>` would print, positions [skip, skip + count) of
// that list, newest first (fewer at the end of the history). `path` is a clean literal
// repository path ("a/b.txt" or a directory "a"; not "", no trailing '/').
// nullopt ("unavailable": the caller runs git log instead) when the repository has no
// usable commit-graph, uses grafts, replace refs or a shallow history, `start` is not a
// readable commit, or any object or graph record cannot be read.
std::optional<std::vector<Oid>> PathLog(const std::string& repo, const Oid& start,
                                        std::string_view path, size_t skip, size_t count);

}  // namespace hangar::git

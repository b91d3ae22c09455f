#pragma once
// Repositories for the commit-graph and path-log tests (tests/git/commit_graph_test.cc,
// path_log_test.cc), made once per process with the real git binary: the same history
// (linear edits, merges changing a path on one side, both sides, evil and TREESAME merges,
// an octopus, deletions and re-additions, renames, a file becoming a directory, a mode
// change, a commit with > 512 changed paths, clock skew and equal commit times, non-ASCII
// and high-bit names) in bare repositories with different commit-graphs:
//   full.git     graph with Bloom filters over every commit
//   single.git   graph written before the last two phases (later commits are not in it)
//   split.git    a two-layer split chain (phases 1 and 2), phase 3 outside it
//   nobloom.git  graph without Bloom filters
//   nograph.git  no commit-graph

#include <string>
#include <vector>

namespace hangar::git::testing {

struct PathLogRepos {
  std::string dir;                  // holds the repositories
  std::vector<std::string> starts;  // commit ids to start logs from (branch heads)
  std::vector<std::string> paths;   // files, directories and missing paths to log
  std::string Repo(const std::string& name) const { return dir + "/" + name + ".git"; }
};

// The repositories, built on first use (a few seconds) and removed at exit.
const PathLogRepos& GetPathLogRepos();

}  // namespace hangar::git::testing

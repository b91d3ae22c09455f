#pragma once
// MaintenanceService: keeps bare repositories in a git-optimal layout (issue #4, cold page
// speed; docs/maintenance.md). An imported repository keeps its source's pack as it is
// (fast-import packs store each file's newest version at the end of a long forward delta
// chain) and pushes add pack after pack; reads then pay for the layout. Maintenance is
// git's own housekeeping, run by `hangar import`, the web import (a "maintain" job of the
// job queue), the periodic "gc" job (ChooseLevel's policy) and `hangar admin maintain`.
//
// Levels, each step a `git` child under one deadline:
//   Full:  pack-refs --all --prune; repack -a -d -f --cruft (deltas recomputed: tips stored
//          whole, objects in recency order) with a bitmap; commit-graph with changed-path
//          Bloom filters as one file (git::WriteCommitGraph).
//   Light: the same without -f (existing deltas reused): merges the packs pushes left.
// Both then write the default branch's search snapshot (git/search_snapshot.h) if missing.
// Unreachable objects are never dropped at once: those younger than `unreachable_grace`
// go to a cruft pack (an object a push or a commit wrote just before its ref update is
// unreachable for that instant), older ones go.
//
// Safety: git's repack writes the new pack, renames it into place and only then deletes
// the packs it started from; a concurrent push's pack carries a .keep until its refs are
// updated, and loose objects are only pruned once packed. A run that fails or times out
// leaves the repository as it was (its temporaries and stale lock files removed). Runs on
// one repository are serialized across processes by flock(2) on <git>/hangar-maintenance.lock;
// a second one gets Conflict.
//
// After each run <git>/hangar-maintenance (key=value lines, written atomically) records
// when the repository was last maintained and how many objects it then had.
//
// Thread-safe. Calls block for as long as git works.

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "db/repo_store.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

enum class MaintenanceLevel { None, Light, Full };

// "none", "light", "full".
std::string_view Name(MaintenanceLevel level);

// What <git>/hangar-maintenance records (all 0 when the file is missing).
struct MaintenanceState {
  int64_t last_full_unix = 0;   // end of the last full maintenance, Unix seconds; 0 = never
  int64_t objects_at_full = 0;  // objects right after it
  int64_t last_light_unix = 0;  // end of the last light maintenance, Unix seconds; 0 = never
};

// The object storage of a repository as found on disk (no git child; idx headers only).
struct RepoLayout {
  int64_t objects = 0;  // loose objects + entries of every non-cruft pack (a duplicate
                        // in two packs counts twice)
  int packs = 0;        // non-cruft packs
  int cruft_packs = 0;  // packs of unreachable objects (with a .mtimes file)
  bool bitmap = false;  // some pack has a reachability bitmap
};

// When ChooseLevel picks which level. No defaults of its own: config.h is their one source,
// and cli's MaintenanceOptionsFrom copies them (a test gives its own).
struct MaintenancePolicy {
  // Full when objects grew this much since the last full one
  // (config maintenance.full_growth_percent).
  int full_growth_percent = 0;
  int light_packs = 0;  // light when at least this many packs (config maintenance.light_packs)
};

// Full when the repository was never fully maintained (state.last_full_unix == 0) or its
// object count grew by policy.full_growth_percent since; else Light when it has
// policy.light_packs packs or more; else None.
MaintenanceLevel ChooseLevel(const MaintenanceState& state, const RepoLayout& layout,
                             const MaintenancePolicy& policy);

// Reads <git_path>/hangar-maintenance; all zeros when missing or unreadable.
MaintenanceState ReadMaintenanceState(const std::string& git_path);

// Counts the objects and packs of the bare repository at `git_path`. Errors: RepoNotFound
// (no objects/ directory).
Result<RepoLayout> ReadRepoLayout(const std::string& git_path);

// Settings of a MaintenanceService. The configured fields have no defaults of their own:
// config.h is their one source, and cli's MaintenanceOptionsFrom copies them (a test gives
// its own).
struct MaintenanceOptions {
  // One run, all steps together (config maintenance.timeout_s).
  std::chrono::milliseconds timeout{0};
  int threads = 0;  // pack.threads of the repack; 0 = one per core (config maintenance.threads)
  // Unreachable objects younger than this stay (in a cruft pack); older ones are dropped
  // (config gc.grace_s).
  std::chrono::seconds unreachable_grace{0};
  MaintenancePolicy policy;
};

// One git step of a run and its wall time.
struct MaintenanceStep {
  std::string name;  // "pack-refs", "repack", "commit-graph"
  int64_t millis = 0;
};

// What a run did.
struct MaintenanceReport {
  MaintenanceLevel level = MaintenanceLevel::None;  // None: nothing was due (MaintainIfDue)
  std::vector<MaintenanceStep> steps;
  RepoLayout before, after;
  int64_t millis = 0;  // whole run

  // "full: pack-refs 0.01 s, repack 47.90 s, commit-graph 2.30 s; packs 3 → 1, 412345
  // objects; 50.21 s".
  std::string Summary() const;
};

// Counts of a MaintainDue pass over all repositories.
struct MaintenanceSweep {
  int repos = 0, full = 0, light = 0, failed = 0;
  bool stopped = false;
};

class MaintenanceService {
 public:
  // `repos` lists the repositories for MaintainDue, `repos_svc` gives their paths.
  MaintenanceService(db::RepoStore& repos, RepoService& repos_svc, MaintenanceOptions options);
  MaintenanceService(const MaintenanceService&) = delete;
  MaintenanceService& operator=(const MaintenanceService&) = delete;

  // Runs `level` (Light or Full; None returns an empty report) on the bare repository at
  // `git_path` now, then records it in <git_path>/hangar-maintenance. `stop` kills git and
  // ends the run early. Errors: RepoNotFound (no repository there), Conflict (another
  // maintenance of it is running), Unavailable (timeout or stop), Internal (git failed,
  // with its message). On error the repository holds what it held before.
  Result<MaintenanceReport> Maintain(const std::string& git_path, MaintenanceLevel level,
                                     std::stop_token stop = {});

  // The level ChooseLevel picks for `git_path` now. Errors: as ReadRepoLayout.
  Result<MaintenanceLevel> Due(const std::string& git_path) const;

  // Maintain(git_path, Due(git_path)). A report with level None when nothing was due.
  Result<MaintenanceReport> MaintainIfDue(const std::string& git_path, std::stop_token stop = {});

  // MaintainIfDue on every repository of the hub (after each "gc" job). Failures
  // are logged and counted, never fatal. Errors: Internal (listing the repositories).
  Result<MaintenanceSweep> MaintainDue(std::stop_token stop = {});

 private:
  db::RepoStore& repos_;
  RepoService& repos_svc_;
  MaintenanceOptions options_;
};

}  // namespace hangar::services

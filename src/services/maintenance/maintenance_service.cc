#include "services/maintenance/maintenance_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/file_lock.h"
#include "core/log.h"
#include "core/util.h"
#include "git/command.h"
#include "git/repo_reader.h"
#include "git/repo_writer.h"
#include "git/search_snapshot.h"

namespace hangar::services {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kStateFile = "hangar-maintenance";
constexpr const char* kLockFile = "hangar-maintenance.lock";
constexpr size_t kMaxGitMessage = 400;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > kMaxGitMessage) s = s.substr(0, kMaxGitMessage) + "…";
  return s;
}

// Removes what a killed or failed git step leaves: repack's `.tmp-<pid>-pack*` files and
// pack-objects' tmp_* files younger than the step, and (killed steps only: `lock_file`) the
// lock file the step held, which would otherwise refuse every later ref deletion or graph
// write. The step's process is gone, so a lock younger than the step is its own.
void CleanAfterKill(const std::string& git_path, pid_t pid, const std::string& lock_file,
                    fs::file_time_type step_started) {
  std::error_code ec;
  // repack renames pack-objects' output to .tmp-<its pid>-pack-*; pack-objects writes into
  // tmp_pack_*, tmp_idx_*, ... first (a push's receive-pack writes into its quarantine
  // directory instead, never here).
  const std::string prefix = ".tmp-" + std::to_string(pid) + "-";
  fs::path pack_dir = fs::path(git_path) / "objects" / "pack";
  for (fs::directory_iterator it(pack_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e;
    bool ours = name.rfind(prefix, 0) == 0;
    if (!ours && name.rfind("tmp_", 0) == 0) {
      auto mtime = fs::last_write_time(it->path(), e);
      ours = !e && mtime >= step_started - std::chrono::seconds(1);
    }
    if (ours) fs::remove(it->path(), e);
  }
  if (lock_file.empty()) return;
  const fs::path lock = fs::path(git_path) / lock_file;
  auto mtime = fs::last_write_time(lock, ec);
  if (!ec && mtime >= step_started - std::chrono::seconds(1)) fs::remove(lock, ec);
}

// Removes what a repack of a process that died left in objects/pack (a worker killed with
// -9: its git died with it, mid-write): every `.tmp-*` file, which only repack writes and
// only under the maintenance lock the caller holds, and pack-objects' `tmp_*` files older
// than an hour. Best effort.
void RemoveDeadRepacksLeftovers(const std::string& git_path) {
  std::error_code ec;
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::path pack_dir = fs::path(git_path) / "objects" / "pack";
  for (fs::directory_iterator it(pack_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e;
    bool stale = name.rfind(".tmp-", 0) == 0;
    if (!stale && name.rfind("tmp_", 0) == 0) {
      auto mtime = fs::last_write_time(it->path(), e);
      stale = !e && mtime < hour_ago;
    }
    if (stale && fs::remove(it->path(), e)) {
      Log("services")
          ->info("maintenance of {}: removed {}, left by a repack that died", git_path, name);
    }
  }
}

// Runs one git step in `git_path` under `deadline` and `stop`. Errors: Unavailable
// (deadline, stop), Internal (non-zero exit, with git's message).
Result<void> RunStep(const std::string& git_path, git::Command& cmd, Clock::time_point deadline,
                     const std::stop_token& stop, const std::string& lock_file) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return MakeError(ErrorCode::Unavailable, "the maintenance timed out");
  if (stop.stop_requested())
    return MakeError(ErrorCode::Unavailable, "the maintenance was stopped");
  // DiesWithParent: a repack of a process killed with -9 must not race the maintenance of
  // the process that takes its job up.
  cmd.Env("GIT_DIR", git_path).Dir(git_path).Timeout(left).DiesWithParent();
  const auto step_started = fs::file_time_type::clock::now();
  HANGAR_ASSIGN_OR_RETURN(auto process, cmd.Start());
  std::stop_callback kill_on_stop(stop, [&process] { process->Kill(); });
  auto code = process->Wait();
  if (!code || stop.stop_requested()) {
    CleanAfterKill(git_path, process->pid(), lock_file, step_started);
    return MakeError(ErrorCode::Unavailable,
                     cmd.ToString() + (stop.stop_requested() ? ": the maintenance was stopped"
                                                             : ": the maintenance timed out"));
  }
  if (*code != 0) {
    // git failed on its own (a corrupt repository): it released its locks, but pack-objects
    // leaves its temporary pack behind.
    CleanAfterKill(git_path, process->pid(), "", step_started);
    return MakeError(ErrorCode::Internal, cmd.ToString() + " failed: " + Trim(process->Stderr()));
  }
  return {};
}

// Objects in the pack index `idx` (the last entry of its fanout table), or -1.
int64_t IdxObjects(const fs::path& idx) {
  std::ifstream in(idx, std::ios::binary);
  unsigned char head[8];
  if (!in.read(reinterpret_cast<char*>(head), 8)) return -1;
  // v2+: "\377tOc" and a version, then the fanout; v1: the fanout right away.
  std::streamoff last = (head[0] == 0xff && head[1] == 't' && head[2] == 'O' && head[3] == 'c')
                            ? 8 + 255 * 4
                            : 255 * 4;
  unsigned char n[4];
  if (!in.seekg(last) || !in.read(reinterpret_cast<char*>(n), 4)) return -1;
  return (int64_t{n[0]} << 24) | (int64_t{n[1]} << 16) | (int64_t{n[2]} << 8) | n[3];
}

Result<void> WriteState(const std::string& git_path, const MaintenanceState& s) {
  std::string text = "# written by hangar after each maintenance (docs/maintenance.md)\n";
  text += "last_full_unix=" + std::to_string(s.last_full_unix) + "\n";
  text += "objects_at_full=" + std::to_string(s.objects_at_full) + "\n";
  text += "last_light_unix=" + std::to_string(s.last_light_unix) + "\n";
  const std::string final_path = git_path + "/" + kStateFile;
  const std::string tmp = final_path + ".tmp-" + RandomHex(6);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return MakeError(ErrorCode::Internal, "writing " + tmp);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return MakeError(ErrorCode::Internal, "writing " + final_path);
  }
  return {};
}

std::string Seconds(int64_t millis) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(millis) / 1000);
  return buf;
}

}  // namespace

std::string_view Name(MaintenanceLevel level) {
  switch (level) {
    case MaintenanceLevel::None:
      return "none";
    case MaintenanceLevel::Light:
      return "light";
    case MaintenanceLevel::Full:
      return "full";
  }
  return "none";
}

MaintenanceLevel ChooseLevel(const MaintenanceState& state, const RepoLayout& layout,
                             const MaintenancePolicy& policy) {
  if (state.last_full_unix == 0) return MaintenanceLevel::Full;
  // objects ≥ at_full × (1 + p/100), in integers.
  if (layout.objects * 100 >= state.objects_at_full * (100 + policy.full_growth_percent) &&
      layout.objects > state.objects_at_full) {
    return MaintenanceLevel::Full;
  }
  if (layout.packs >= policy.light_packs) return MaintenanceLevel::Light;
  return MaintenanceLevel::None;
}

MaintenanceState ReadMaintenanceState(const std::string& git_path) {
  MaintenanceState s;
  std::ifstream in(git_path + "/" + kStateFile);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    int64_t v = std::strtoll(line.c_str() + eq + 1, nullptr, 10);
    if (key == "last_full_unix") s.last_full_unix = v;
    if (key == "objects_at_full") s.objects_at_full = v;
    if (key == "last_light_unix") s.last_light_unix = v;
  }
  return s;
}

Result<RepoLayout> ReadRepoLayout(const std::string& git_path) {
  const fs::path objects = fs::path(git_path) / "objects";
  std::error_code ec;
  if (!fs::is_directory(objects, ec)) {
    return MakeError(ErrorCode::RepoNotFound, "no git repository at " + git_path);
  }
  RepoLayout layout;
  for (fs::directory_iterator it(objects / "pack", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".bitmap") layout.bitmap = true;
    if (p.extension() != ".idx") continue;
    fs::path pack = fs::path(p).replace_extension(".pack");
    std::error_code e;
    if (!fs::exists(pack, e)) continue;  // being written or deleted
    if (fs::exists(fs::path(p).replace_extension(".mtimes"), e)) {
      ++layout.cruft_packs;
      continue;
    }
    ++layout.packs;
    layout.objects += std::max<int64_t>(0, IdxObjects(p));
  }
  // Loose objects: only the fan-out directories that exist (git removes emptied ones), so a
  // packed repository costs one directory listing here, not 256 failed opens.
  ec.clear();
  for (fs::directory_iterator d(objects, ec), end; !ec && d != end; d.increment(ec)) {
    const std::string dir = d->path().filename().string();
    if (dir.size() != 2 || !std::isxdigit(static_cast<unsigned char>(dir[0])) ||
        !std::isxdigit(static_cast<unsigned char>(dir[1]))) {
      continue;
    }
    std::error_code e;
    for (fs::directory_iterator it(d->path(), e); !e && it != end; it.increment(e)) {
      if (it->path().filename().string().size() == 38) ++layout.objects;
    }
  }
  return layout;
}

std::string MaintenanceReport::Summary() const {
  std::string s = std::string(Name(level)) + ":";
  for (size_t i = 0; i < steps.size(); ++i) {
    s += (i ? ", " : " ") + steps[i].name + " " + Seconds(steps[i].millis);
  }
  s += "; packs " + std::to_string(before.packs) + " → " + std::to_string(after.packs) + ", " +
       std::to_string(after.objects) + " objects; " + Seconds(millis);
  return s;
}

MaintenanceService::MaintenanceService(db::RepoStore& repos, RepoService& repos_svc,
                                       MaintenanceOptions options)
    : repos_(repos), repos_svc_(repos_svc), options_(std::move(options)) {
  if (options_.threads <= 0) {
    options_.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
}

Result<MaintenanceReport> MaintenanceService::Maintain(const std::string& git_path,
                                                       MaintenanceLevel level,
                                                       std::stop_token stop) {
  MaintenanceReport report;
  HANGAR_ASSIGN_OR_RETURN(report.before, ReadRepoLayout(git_path));
  report.after = report.before;
  if (level == MaintenanceLevel::None) return report;
  // One maintenance of a repository at a time, across processes.
  HANGAR_ASSIGN_OR_RETURN(
      FileLock lock, FileLock::TryTake(git_path + "/" + kLockFile, "a maintenance of " + git_path));
  RemoveDeadRepacksLeftovers(git_path);
  const auto started = Clock::now();
  const auto deadline = started + options_.timeout;
  auto step = [&](const char* name, auto&& run) -> Result<void> {
    const auto t0 = Clock::now();
    HANGAR_TRY(run());
    report.steps.push_back(
        {name, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()});
    return {};
  };
  HANGAR_TRY(step("pack-refs", [&]() -> Result<void> {
    git::Command cmd("pack-refs");
    cmd.Arg("--all").Arg("--prune");
    return RunStep(git_path, cmd, deadline, stop, "packed-refs.lock");
  }));
  HANGAR_TRY(step("repack", [&]() -> Result<void> {
    git::Command cmd;
    cmd.Arg("-c").Arg("pack.threads=" + std::to_string(options_.threads));
    cmd.Arg("repack");
    cmd.Arg("-a").Arg("-d").Arg("-q");
    if (level == MaintenanceLevel::Full) cmd.Arg("-f");
    cmd.Arg("--write-bitmap-index").Arg("--cruft");
    cmd.Arg("--cruft-expiration=" + std::to_string(options_.unreachable_grace.count()) +
            ".seconds.ago");
    return RunStep(git_path, cmd, deadline, stop, "");
  }));
  // The cruft pack holds the young unreachable objects; the expired ones that were loose
  // stay loose (prune-packed removes only what a pack holds), readable by id, until
  // pruned — as git gc prunes after its repack. A squash or a rewrite relies on it.
  HANGAR_TRY(step("prune", [&]() -> Result<void> {
    git::Command cmd("prune");
    cmd.Arg("--expire=" + std::to_string(options_.unreachable_grace.count()) + ".seconds.ago");
    return RunStep(git_path, cmd, deadline, stop, "");
  }));
  HANGAR_TRY(step("commit-graph", [&]() -> Result<void> {
    if (stop.stop_requested())
      return MakeError(ErrorCode::Unavailable, "the maintenance was stopped");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return MakeError(ErrorCode::Unavailable, "the maintenance timed out");
    auto graph = git::WriteCommitGraph(git_path, left);
    if (!graph && graph.error().code == ErrorCode::Unavailable) {
      std::error_code ec;  // killed: its lock would refuse every later graph write
      fs::remove(fs::path(git_path) / "objects/info/commit-graph.lock", ec);
    }
    return graph;
  }));
  HANGAR_ASSIGN_OR_RETURN(report.after, ReadRepoLayout(git_path));
  report.level = level;
  report.millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  MaintenanceState state = ReadMaintenanceState(git_path);
  if (level == MaintenanceLevel::Full) {
    state.last_full_unix = NowUnix();
    state.objects_at_full = report.after.objects;
  } else {
    state.last_light_unix = NowUnix();
  }
  // Written last, into the repository directory itself: the rename changes the
  // directory's ctime, which makes every reader thread reopen its cached libgit2 handle
  // (git/git2_util.cc) and so drop the packs the repack deleted.
  HANGAR_TRY(WriteState(git_path, state));
  // The default branch's search snapshot (git/search_snapshot.h), so the first search
  // after an import or a restart reads one file. Best effort: search falls back to
  // writing it, or to git grep.
  const auto t0 = Clock::now();
  auto head = git::RepoReader().ResolveRevision(git_path, "HEAD");
  auto snap = head ? git::SearchSnapshot::Open(git_path, *head)
                   : Result<std::unique_ptr<git::SearchSnapshot>>(std::move(head).error());
  if (snap) {
    report.steps.push_back(
        {"search-snapshot",
         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()});
  } else if (snap.error().code != ErrorCode::Unavailable &&
             snap.error().code != ErrorCode::RevisionNotFound) {
    Log("services")->warn("search snapshot of {}: {}", git_path, snap.error().message);
  }
  return report;
}

Result<MaintenanceLevel> MaintenanceService::Due(const std::string& git_path) const {
  HANGAR_ASSIGN_OR_RETURN(RepoLayout layout, ReadRepoLayout(git_path));
  return ChooseLevel(ReadMaintenanceState(git_path), layout, options_.policy);
}

Result<MaintenanceReport> MaintenanceService::MaintainIfDue(const std::string& git_path,
                                                            std::stop_token stop) {
  HANGAR_ASSIGN_OR_RETURN(MaintenanceLevel level, Due(git_path));
  return Maintain(git_path, level, std::move(stop));
}

Result<MaintenanceSweep> MaintenanceService::MaintainDue(std::stop_token stop) {
  MaintenanceSweep sweep;
  db::RepoQuery q;
  q.sort = db::RepoSort::Id;
  q.descending = false;
  q.limit = 1000;
  q.include_all_private = true;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(db::RepoPage page, repos_.List(q));
    for (const db::RepoRecord& rec : page.items) {
      if (stop.stop_requested()) {
        sweep.stopped = true;
        return sweep;
      }
      ++sweep.repos;
      const std::string path = repos_svc_.GitPath(rec.Id());
      auto report = MaintainIfDue(path, stop);
      if (!report) {
        // A repository deleted meanwhile, or one being maintained by someone else: no news.
        auto code = report.error().code;
        if (code != ErrorCode::RepoNotFound && code != ErrorCode::Conflict) {
          ++sweep.failed;
          Log("services")
              ->error("maintenance of {} failed: {}", rec.Id().UrlPath(), report.error().message);
        }
        continue;
      }
      if (report->level == MaintenanceLevel::None) continue;
      ++(report->level == MaintenanceLevel::Full ? sweep.full : sweep.light);
      Log("services")->info("maintained {}: {}", rec.Id().UrlPath(), report->Summary());
    }
    if (page.next_cursor.empty()) return sweep;
    q.cursor = page.next_cursor;
  }
}

}  // namespace hangar::services

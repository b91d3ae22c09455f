#include "cli/maintain_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/stop_on_signal.h"
#include "core/log.h"

namespace hangar::cli {
namespace {

struct MaintainFlags {
  std::string repo_id;  // NS/NAME, or "" with --all
  std::string type = "model";
  bool all = false, full = false, light = false, queue = false;
  std::string config_file;
  std::string data_dir;
};

// Maintains one repo and prints "<type>/<ns>/<name>: <summary>" — or, with `queue`, queues
// it as a job and prints "<type>/<ns>/<name>: queued as job <id>". Returns an exit status.
int MaintainOne(App& hub, const RepoId& id, services::MaintenanceLevel level, bool queue,
                const StopOnSignal& signals) {
  auto handle = hub.repos().Open(Principal::Operator(), id, services::Access::Read);
  if (!handle)
    return Fail(
        MakeError(handle.error().code, "repo " + id.UrlPath() + ": " + handle.error().message));
  if (queue) {
    auto job = hub.QueueMaintenance(handle->git_path, level);
    if (!job) return Fail(job.error());
    std::printf("%s: queued as job %lld\n", id.UrlPath().c_str(), static_cast<long long>(*job));
    return 0;
  }
  auto report = hub.maintenance().Maintain(handle->git_path, level, signals.token());
  if (int s = signals.signal(); s != 0) {
    std::fprintf(stderr, "hangar: maintenance of %s interrupted; the repo is as it was\n",
                 id.UrlPath().c_str());
    return 128 + s;
  }
  if (!report) {
    return Fail(MakeError(report.error().code,
                          "maintenance of " + id.UrlPath() + " failed: " + report.error().message));
  }
  std::printf("%s: %s\n", id.UrlPath().c_str(), report->Summary().c_str());
  std::fflush(stdout);
  return 0;
}

int RunMaintain(const MaintainFlags& f) {
  if (f.full && f.light) {
    return Fail(MakeError(ErrorCode::BadRequest, "--full and --light exclude each other"));
  }
  if (f.all == !f.repo_id.empty()) {
    return Fail(MakeError(ErrorCode::BadRequest, f.all ? "give NS/NAME or --all, not both"
                                                       : "give the repo as NS/NAME, or --all"));
  }
  auto type = ParseRepoType(f.type);
  if (!type)
    return Fail(MakeError(ErrorCode::BadRequest, "--type must be model, dataset or space"));
  std::optional<RepoId> one;
  if (!f.all) {
    size_t slash = f.repo_id.find('/');
    if (slash == std::string::npos) {
      return Fail(MakeError(ErrorCode::BadRequest, "the repo must be given as NAMESPACE/NAME"));
    }
    auto id = RepoId::Parse(*type, f.repo_id.substr(0, slash), f.repo_id.substr(slash + 1));
    if (!id) return Fail(id.error());
    one = *id;
  }
  const auto level = f.light ? services::MaintenanceLevel::Light : services::MaintenanceLevel::Full;
  StopOnSignal signals;
  SetLogLevel("warn");
  auto hub = App::OpenFor(f.config_file, f.data_dir);
  if (!hub) return Fail(hub.error());
  if (one) return MaintainOne(**hub, *one, level, f.queue, signals);

  // --all: every repo of every type, one after the other; a failure does not stop the rest.
  int rc = 0;
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    db::RepoQuery q;
    q.type = t;
    q.sort = db::RepoSort::Id;
    q.descending = false;
    q.limit = 1000;
    q.include_all_private = true;
    for (;;) {
      auto page = hub->get()->repos().List(Principal::Operator(), q);
      if (!page) return Fail(page.error());
      for (const auto& rec : page->items) {
        int one_rc = MaintainOne(**hub, rec.Id(), level, f.queue, signals);
        if (one_rc >= 128) return one_rc;
        rc = std::max(rc, one_rc == 2 ? 1 : one_rc);
      }
      if (page->next_cursor.empty()) break;
      q.cursor = page->next_cursor;
    }
  }
  return rc;
}

}  // namespace

int MaintainAfterImport(App& hub, const RepoId& id, std::stop_token stop) {
  auto path = hub.repos().GitPath(id);
  std::printf("maintaining %s (full; --no-maintain skips this)...\n", id.UrlPath().c_str());
  std::fflush(stdout);
  auto report = hub.maintenance().Maintain(path, services::MaintenanceLevel::Full, stop);
  if (!report) {
    // The import itself succeeded and the repository is complete, as copied.
    std::fprintf(stderr,
                 "hangar: warning: %s is imported, but its maintenance failed: %s; run `hangar "
                 "admin maintain %s` later\n",
                 id.UrlPath().c_str(), report.error().message.c_str(), id.Id().c_str());
    return stop.stop_requested() ? 130 : 0;
  }
  for (const auto& s : report->steps) {
    std::printf("  %-13s %8.2f s\n", s.name.c_str(), static_cast<double>(s.millis) / 1000);
  }
  std::printf("maintained %s: %s\n", id.UrlPath().c_str(), report->Summary().c_str());
  return 0;
}

void AddMaintainCommand(CLI::App& admin, std::optional<int>* exit_code) {
  auto flags = std::make_shared<MaintainFlags>();
  auto* cmd = admin.add_subcommand(
      "maintain",
      "repack repos into a git-optimal layout now: refs packed, one pack with fresh deltas "
      "and a bitmap, commit-graph (docs/maintenance.md)");
  cmd->add_option("REPO", flags->repo_id, "NAMESPACE/NAME of the repo");
  cmd->add_flag("--all", flags->all, "every repo of the hub, one after the other");
  cmd->add_option("--type", flags->type, "type of REPO: model (default), dataset or space")
      ->check(CLI::IsMember({"model", "dataset", "space"}));
  cmd->add_flag("--full", flags->full, "recompute every delta (the default)");
  cmd->add_flag("--light", flags->light, "merge packs, reusing their deltas (faster)");
  cmd->add_flag("--queue", flags->queue,
                "queue it as a job for the hub's job runners (`hangar serve`, `hangar worker`) "
                "and return at once");
  cmd->add_option("--config", flags->config_file, "TOML config file");
  cmd->add_option("--data-dir", flags->data_dir, "data directory (default ./hangar-data)");
  cmd->callback([flags, exit_code] { *exit_code = RunMaintain(*flags); });
}

}  // namespace hangar::cli

#include "cli/import_command.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "cli/app.h"
#include "cli/cli_util.h"
#include "cli/maintain_command.h"
#include "cli/stop_on_signal.h"
#include "core/log.h"
#include "db/sql/sql_stores.h"
#include "services/git/import_service.h"

namespace hangar::cli {
namespace {

namespace fs = std::filesystem;

struct ImportFlags {
  std::string source;
  std::string repo_id;  // NS/NAME
  std::string type = "model";
  bool is_private = false;
  bool no_maintain = false;
  int64_t timeout_s = 3600;
  std::string config_file;
  std::string data_dir;
};

// A local source as git must see it: absolute (git runs elsewhere). Anything that is not
// an existing path goes through as typed, for the service to judge.
std::string Absolutize(const std::string& source) {
  std::error_code ec;
  if (source.find("://") != std::string::npos || source.empty() || source.front() == '/' ||
      !fs::exists(source, ec)) {
    return source;
  }
  return fs::absolute(source, ec).lexically_normal().string();
}

int RunImport(const ImportFlags& f) {
  auto type = ParseRepoType(f.type);
  if (!type)
    return Fail(MakeError(ErrorCode::BadRequest, "--type must be model, dataset or space"));
  size_t slash = f.repo_id.find('/');
  if (slash == std::string::npos) {
    return Fail(MakeError(ErrorCode::BadRequest, "the repo must be given as NAMESPACE/NAME"));
  }
  StopOnSignal signals;
  SetLogLevel("warn");
  auto hub = App::OpenFor(f.config_file, f.data_dir);
  if (!hub) return Fail(hub.error());
  // App keeps its stores to itself; a second connection pool on the same database is what
  // the admin commands do beside a running server anyway.
  auto stores =
      db::OpenStores((*hub)->config().database.url, (*hub)->config().database.sqlite_path, 2);
  if (!stores) return Fail(stores.error());
  services::ImportOptions options;
  options.tmp_dir = fs::path((*hub)->config().storage.data_dir) / "tmp";
  options.timeout = std::chrono::seconds(f.timeout_s);
  services::ImportService imports(*stores->repos, *stores->users, (*hub)->access(), (*hub)->repos(),
                                  options);

  const Principal operator_principal = Principal::Operator();
  services::ImportRequest req;
  req.source = Absolutize(f.source);
  req.type = *type;
  req.ns = f.repo_id.substr(0, slash);
  req.name = f.repo_id.substr(slash + 1);
  req.is_private = f.is_private;
  req.allow_local = true;
  req.stop = signals.token();
  auto rec = imports.Import(operator_principal, req);
  if (int s = signals.signal(); s != 0 && !rec) {
    std::fprintf(stderr, "hangar: import interrupted; nothing was imported\n");
    return 128 + s;
  }
  if (!rec) return Fail(rec.error());
  std::printf("imported %s as %s (default branch %s, head %s)\n",
              services::RedactImportSource(req.source).c_str(), rec->Id().UrlPath().c_str(),
              rec->default_branch.c_str(), rec->last_commit.substr(0, 12).c_str());
  if (f.no_maintain) return 0;
  std::fflush(stdout);
  return MaintainAfterImport(**hub, rec->Id(), signals.token());
}

}  // namespace

void AddImportCommand(CLI::App& app, std::optional<int>* exit_code) {
  auto flags = std::make_shared<ImportFlags>();
  auto* cmd = app.add_subcommand(
      "import",
      "make a hub repo from a git repository, copying all its refs (docs/import.md); "
      "SOURCE is a local path, file://, http(s)://, git:// or ssh:// URL; LFS objects are "
      "not copied (only their pointer files)");
  cmd->add_option("SOURCE", flags->source, "repository to copy: path or git URL")->required();
  cmd->add_option("REPO", flags->repo_id, "NAMESPACE/NAME of the new repo (a user or org)")
      ->required();
  cmd->add_option("--type", flags->type, "model (default), dataset or space")
      ->check(CLI::IsMember({"model", "dataset", "space"}));
  cmd->add_flag("--private", flags->is_private, "make the new repo private");
  cmd->add_flag("--no-maintain", flags->no_maintain,
                "keep the source's pack layout: skip the full maintenance (repack with fresh "
                "deltas, bitmap, commit-graph) that follows the copy (docs/maintenance.md)");
  cmd->add_option("--timeout", flags->timeout_s, "seconds the whole import may take (3600)")
      ->check(CLI::Range(int64_t{1}, int64_t{7 * 24 * 3600}));
  cmd->add_option("--config", flags->config_file, "TOML config file");
  cmd->add_option("--data-dir", flags->data_dir, "data directory (default ./hangar-data)");
  cmd->callback([flags, exit_code] { *exit_code = RunImport(*flags); });
}

}  // namespace hangar::cli

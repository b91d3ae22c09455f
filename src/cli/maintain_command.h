#pragma once
// `hangar admin maintain [NS/NAME | --all] [--full | --light]`: repacks repositories into a
// git-optimal layout now (docs/maintenance.md). Runs on the data dir directly, beside a
// running server or not; a repository another process is maintaining is refused.

#include <CLI/CLI.hpp>

#include <optional>
#include <stop_token>
#include <string>

#include "cli/app.h"

namespace hangar::cli {

// Adds `maintain` under `admin`. When parsed it runs right then (a CLI11 callback) and its
// exit status lands in `*exit_code`: 0 done, 2 refused (bad input, unknown repo, a
// maintenance already running), 1 failed (git failed or timed out; the repository is as
// it was), 128 + signal when interrupted.
void AddMaintainCommand(CLI::App& admin, std::optional<int>* exit_code);

// Runs a full maintenance of the repo `id` of `hub` as `hangar import` does after the copy,
// printing each step's time to stdout. Returns the exit status as above. `stop` kills git.
int MaintainAfterImport(App& hub, const RepoId& id, std::stop_token stop);

}  // namespace hangar::cli

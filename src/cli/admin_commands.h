#pragma once
// `hangar admin user|token|org|ssh-key|deploy-key|jobs|gc`: accounts, SSH keys, the job
// queue and garbage collection, run on the data dir directly, whether or not a server is
// running (issue #2 CLI contract, docs/ssh.md, docs/gc.md).

#include <CLI/CLI.hpp>

#include <optional>

namespace hangar::cli {

// Adds `user create`, `token create|revoke|list`, `org create|add-member`,
// `ssh-key add|list|delete`, `deploy-key add|list|delete`, `jobs list|retry` and `gc` under
// `admin`. When one is parsed it runs right then (a CLI11 callback) and its exit status
// lands in `*exit_code`: 0 done, 2 refused (bad input, unknown user), 1 failed.
void AddAdminCommands(CLI::App& admin, std::optional<int>* exit_code);

}  // namespace hangar::cli

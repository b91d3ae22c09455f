#pragma once
// `hangar import SOURCE NS/NAME`: makes a hub repo out of an existing git repository
// (issue #4 point 2; docs/import.md). Runs on the server with the operator's rights, on
// the data dir directly, whether or not `hangar serve` runs on it.

#include <CLI/CLI.hpp>

#include <optional>

namespace hangar::cli {

// Adds the `import` subcommand to `app`. When it is parsed it runs right then (as a CLI11
// callback) and its exit status lands in `*exit_code`: 0 imported, 2 refused (bad source,
// name, namespace, repo exists), 1 failed (timeout, interrupted, internal), 130 on SIGINT.
void AddImportCommand(CLI::App& app, std::optional<int>* exit_code);

}  // namespace hangar::cli

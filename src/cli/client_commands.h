#pragma once
// `hangar upload` and `hangar download`: the command-line face of src/client/.

#include <CLI/CLI.hpp>

#include <optional>

namespace hangar::cli {

// Adds the client subcommands to `app`. When one of them is parsed it runs right then (as a
// CLI11 callback) and its exit status lands in `*exit_code`.
void AddClientCommands(CLI::App& app, std::optional<int>* exit_code);

}  // namespace hangar::cli

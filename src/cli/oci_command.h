#pragma once
// `hangar oci push REF PATH...` and `hangar oci pull REF`: the command-line face of
// client/oci_transfer.h (docs/oci-client.md).

#include <CLI/CLI.hpp>

#include <optional>

namespace hangar::cli {

// Adds the `oci` subcommand (with `push` and `pull`) to `app`. When one of them is parsed
// it runs right then (as a CLI11 callback) and its exit status lands in `*exit_code`:
// 0 done, 2 refused (bad arguments, credentials, missing files, a 4xx), 1 failed
// (registry unreachable, 5xx, I/O).
void AddOciCommands(CLI::App& app, std::optional<int>* exit_code);

}  // namespace hangar::cli

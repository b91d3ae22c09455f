#pragma once
// `hangar keys` and `hangar serv`: the two commands OpenSSH's sshd runs for git over SSH
// (docs/ssh.md, issue 18 §1). Both are thin: they forward to the running hub over its serv
// socket (api/git/serv_protocol.h), which decides everything.
//   hangar keys [--config F] [--data-dir D] TYPE BLOB   (AuthorizedKeysCommand … %t %k)
//     prints the authorized_keys line of a known key, whose forced command is `hangar serv`;
//     prints nothing (exit 0) for an unknown key, so sshd refuses it.
//   hangar serv [--config F] [--data-dir D] key-<id>     (the forced command)
//     runs $SSH_ORIGINAL_COMMAND (git-upload-pack, git-receive-pack, git-lfs-authenticate)
//     on the hub, as key <id>, with $GIT_PROTOCOL.

#include <CLI/CLI.hpp>

#include <optional>

namespace hangar::cli {

// Adds `keys` and `serv` to `app`; each runs when parsed and sets `*exit_code`.
void AddSshCommands(CLI::App& app, std::optional<int>* exit_code);

}  // namespace hangar::cli

#pragma once
// ParseSshCommand: the command an SSH client asks the hub to run (sshd's
// SSH_ORIGINAL_COMMAND, which `hangar serv` forwards), e.g. "git-upload-pack 'alice/m.git'"
// or "git-lfs-authenticate datasets/alice/d.git download" (git-lfs.md §11.1, issue 18 §1).
// Nothing here runs a shell: the command is parsed, and only what parses is served.

#include <string>
#include <string_view>

#include "core/repo_id.h"
#include "core/result.h"

namespace hangar::api {

enum class SshVerb { UploadPack, ReceivePack, LfsAuthenticate, LfsTransfer };

struct SshCommand {
  SshVerb verb = SshVerb::UploadPack;
  RepoId repo;
  std::string operation;  // git-lfs-authenticate / git-lfs-transfer: "upload" | "download"
};

// Accepts "<verb> <path>" for git-upload-pack and git-receive-pack (also spelled "git
// upload-pack"), "<verb> <path> <upload|download>" for git-lfs-authenticate and
// git-lfs-transfer. <path> is bare ([A-Za-z0-9._~/-]) or single-quoted the way git quotes
// it ('…', with '\'' and '\!' escapes); it may start with '/' and end with ".git" or '/',
// and names "[models/|datasets/|spaces/]<ns>/<name>" (RepoId::Parse checks the parts, so
// ".." and friends are refused). Errors: BadRequest with a message for the client
// ("unknown command '…'", "not a repository path: …", "malformed quoting"); the command is
// shown at most 64 characters long, control characters replaced.
Result<SshCommand> ParseSshCommand(std::string_view command);

// The repo a git path names, over SSH and git://: "[/][models/|datasets/|spaces/]<ns>/
// <name>[.git][/]". Errors: BadRequest "not a repository path: …".
Result<RepoId> ParseGitRepoPath(std::string_view path);

}  // namespace hangar::api

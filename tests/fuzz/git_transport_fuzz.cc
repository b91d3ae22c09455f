// What clients send to the hub's non-HTTP git faces (issue 18): SSH commands
// (api/git/ssh_command.h, from sshd's SSH_ORIGINAL_COMMAND), git://'s request packet
// (api/git/git_daemon.h). Whatever parses must name a valid repo and a known verb.

#include "api/git/git_daemon.h"
#include "api/git/ssh_command.h"
#include "fuzz_check.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  if (auto cmd = api::ParseSshCommand(text)) {
    FUZZ_CHECK(!cmd->repo.ns.empty() && !cmd->repo.name.empty());
    FUZZ_CHECK(cmd->repo.Id().find("..") == std::string::npos);
    bool lfs = cmd->verb == api::SshVerb::LfsAuthenticate || cmd->verb == api::SshVerb::LfsTransfer;
    FUZZ_CHECK(lfs == !cmd->operation.empty());
    if (lfs) FUZZ_CHECK(cmd->operation == "upload" || cmd->operation == "download");
  }
  if (auto id = api::ParseGitRepoPath(text)) {
    FUZZ_CHECK(RepoId::Parse(id->type, id->ns, id->name).has_value());
  }
  if (auto req = api::ParseGitDaemonRequest(text)) {
    FUZZ_CHECK(!req->service.empty() || text.starts_with(' '));
    FUZZ_CHECK(!req->path.empty());
    FUZZ_CHECK(req->path.find('\0') == std::string::npos);
  }
  return 0;
}

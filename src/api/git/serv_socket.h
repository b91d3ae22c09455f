#pragma once
// ServSocket: the hub's side of git over SSH (issue 18 §1, docs/ssh.md). sshd runs
// `hangar keys` (AuthorizedKeysCommand) and, for a known key, the forced command `hangar
// serv key-<id>`; both reach the running hub over this Unix socket (serv_protocol.h), which
// only processes of the hub's own user may connect to. The hub then does everything a git
// request over HTTP gets: who the key is, the repo's access rules, the one admission budget
// (waiting clients are told why on stderr; refused ones get an ERR packet), git itself, and
// AfterPush.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "api/git/stream_listener.h"
#include "core/result.h"
#include "services/git/git_service.h"
#include "services/git/ssh_keys.h"

namespace hangar::api {

struct ServSocketOptions {
  std::string path;  // the socket file
  // git sessions at once; more are refused with an ERR packet. Key lookups (`hangar keys`)
  // have room beyond it, so sessions held open never lock every user out of signing in.
  int max_sessions = 64;
  std::string public_url;      // the hub's HTTP base URL, for git-lfs-authenticate's href
  std::string credential_key;  // the server secret (repo credentials)
  std::chrono::seconds lfs_credential_ttl{std::chrono::minutes(15)};
  std::chrono::seconds hello_timeout{10};  // the client's first frame arrives within this
  // A git session in which no byte moved either way for this long is cut off (a client
  // that stopped reading, or went quiet; PumpGit).
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
};

class ServSocket {
 public:
  ServSocket(ServSocketOptions options, services::GitService& git, services::SshKeyService& keys);
  ~ServSocket();

  // Binds the socket (mode 0600) and starts serving. Errors: BadRequest (path), Internal.
  Result<void> Start();
  // Stops serving; running sessions are cut off. Idempotent.
  void Stop();

 private:
  void Handle(int fd);
  void Serv(int fd, int64_t key_id, const std::string& command, const std::string& git_protocol,
            const std::string& client);

  const ServSocketOptions options_;
  std::atomic<int> sessions_{0};
  services::GitService& git_;
  services::SshKeyService& keys_;
  std::unique_ptr<StreamListener> listener_;
};

}  // namespace hangar::api

#pragma once
// GitDaemon: git:// (issue 18 §2) — anonymous, read-only clones and fetches of public repos,
// as `git daemon` serves them, on the one admission budget of every git transport (the
// anonymous class, keyed by the client's address). Off unless [git_daemon] listen is set.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "api/git/stream_listener.h"
#include "core/result.h"
#include "services/git/git_service.h"

namespace hangar::api {

struct GitDaemonOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9418;      // 0: any free port (see GitDaemon::port)
  int max_connections = 64;  // connections at once; more get an ERR packet
  // The client's whole request packet must arrive within this, counted from the
  // connection (a client that connects and sends nothing, or trickles, is cut off).
  std::chrono::seconds request_timeout{10};
  // A clone in which no byte moved either way for this long is cut off (PumpGit).
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
};

class GitDaemon {
 public:
  GitDaemon(GitDaemonOptions options, services::GitService& git);
  ~GitDaemon();

  // Listens and starts serving. Errors: Internal (the address).
  Result<void> Start();
  // The port it listens on (after Start).
  uint16_t port() const { return port_; }
  // Stops serving; running clones are cut off. Idempotent.
  void Stop();

 private:
  void Handle(int fd, const std::string& peer);

  const GitDaemonOptions options_;
  services::GitService& git_;
  uint16_t port_ = 0;
  std::unique_ptr<StreamListener> listener_;
};

// The parts of git://'s request packet ("git-upload-pack /ns/name.git\0host=h\0\0version=2\0",
// gitprotocol-pack(5)).
struct GitDaemonRequest {
  std::string service;       // "git-upload-pack"
  std::string path;          // "/ns/name.git"
  std::string git_protocol;  // the extra parameters joined by ':' ("version=2"), or ""
};

// Parses the request packet's payload (without its 4-byte length). Errors: BadRequest
// "malformed request" for a payload without the service, path or NUL terminators.
Result<GitDaemonRequest> ParseGitDaemonRequest(std::string_view payload);

}  // namespace hangar::api

#pragma once
// PumpGit: moves a full-duplex git conversation between a transport (SSH through the serv
// socket, git://) and the git process a GitConnection started, in both directions at once.

#include <chrono>
#include <span>
#include <string_view>

#include "core/result.h"
#include "services/git/git_service.h"

namespace hangar::api {

// One client connection, as the pump sees it. ReadIn runs on a thread of the pump's own
// while WriteOut runs on the caller's.
class GitTransport {
 public:
  virtual ~GitTransport() = default;
  // The client's next bytes for git's stdin; 0 when the client's input ended.
  // Errors: the client vanished or broke the transport's framing.
  virtual Result<size_t> ReadIn(std::span<char> buf) = 0;
  // Sends git's output to the client. Errors: the client vanished.
  virtual Result<void> WriteOut(std::string_view data) = 0;
  // Makes a ReadIn blocked now or later return at once (shutdown of the read side).
  virtual void StopReading() = 0;
  // Cuts the connection both ways: a blocked ReadIn or WriteOut returns at once.
  virtual void Abort() = 0;
};

// Copies the client's input into git's stdin (closing it at the input's end) while git's
// stdout goes to the client, until git's output ends; then waits for git
// (GitConnection::Finish, which runs AfterPush after a push). A client that vanishes or
// breaks the framing gets git killed, so a cut-off push changes nothing; so does a
// conversation in which no byte moved either way for `idle_timeout` (a client that stopped
// reading, or one that says nothing — git's own --timeout does not cover protocol v2).
// Returns git's exit status. Errors: as GitConnection::Finish.
Result<int> PumpGit(services::GitConnection& conn, GitTransport& transport,
                    std::chrono::milliseconds idle_timeout);

}  // namespace hangar::api

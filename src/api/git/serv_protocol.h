#pragma once
// The serv socket's framing (docs/ssh.md): how `hangar serv` and `hangar keys`, started by
// sshd, talk to the running hub over its Unix socket. Every message is a frame:
//   type (1 byte) · payload length (4 bytes, big-endian, at most kMaxFramePayload) · payload
// The client's first frame is Hello (a JSON object); then the client sends Stdin frames
// and one StdinEnd, the hub Stdout and Stderr frames and, last, Exit (4 bytes, big-endian
// exit status).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar::api {

enum class ServFrame : char {
  Hello = 'H',     // client → hub: {"op":"serv","key_id":N,"command":…,"git_protocol":…,
                   //                "client":…} or {"op":"keys","type":…,"blob":…}
  Stdin = 'I',     // client → hub: bytes for git's stdin
  StdinEnd = 'E',  // client → hub: the client's stdin ended
  Stdout = 'O',    // hub → client: bytes for the client's stdout
  Stderr = 'R',    // hub → client: a message for the client's stderr
  Exit = 'X',      // hub → client: the exit status; the last frame
};

inline constexpr size_t kMaxFramePayload = 64 << 10;

struct ServMessage {
  ServFrame type = ServFrame::Exit;
  std::string payload;
};

// Writes one frame to the blocking socket `fd` (EINTR retried, never SIGPIPE).
// Errors: Internal (the peer is gone or the socket failed).
Result<void> WriteServFrame(int fd, ServFrame type, std::string_view payload);
// An Exit frame carrying `status`.
Result<void> WriteServExit(int fd, int status);

// Reads one frame from `fd`. Errors: NotFound when the peer closed the socket at a frame
// boundary (the normal end); BadRequest for an unknown type, a payload over
// kMaxFramePayload or a frame cut short; Unavailable when the socket's receive timeout ran
// out; Internal otherwise.
Result<ServMessage> ReadServFrame(int fd);

// The status an Exit frame's payload carries. Errors: BadRequest (not 4 bytes).
Result<int> ServExitStatus(std::string_view payload);

}  // namespace hangar::api

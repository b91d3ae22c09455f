#include "api/git/serv_protocol.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace hangar::api {

namespace {

bool KnownType(char t) {
  switch (static_cast<ServFrame>(t)) {
    case ServFrame::Hello:
    case ServFrame::Stdin:
    case ServFrame::StdinEnd:
    case ServFrame::Stdout:
    case ServFrame::Stderr:
    case ServFrame::Exit:
      return true;
  }
  return false;
}

Result<void> SendAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return MakeError(ErrorCode::Internal, std::string("serv socket: ") + std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

// Reads exactly n bytes; *got tells how many arrived before an end or error.
Result<void> RecvAll(int fd, char* p, size_t n, size_t* got) {
  *got = 0;
  while (*got < n) {
    ssize_t r = ::recv(fd, p + *got, n - *got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return MakeError(ErrorCode::Unavailable, "serv socket: timed out");
    }
    if (r < 0) {
      return MakeError(ErrorCode::Internal, std::string("serv socket: ") + std::strerror(errno));
    }
    if (r == 0) return MakeError(ErrorCode::NotFound, "serv socket closed");
    *got += static_cast<size_t>(r);
  }
  return {};
}

}  // namespace

Result<void> WriteServFrame(int fd, ServFrame type, std::string_view payload) {
  if (payload.size() > kMaxFramePayload) {
    // Split: every frame type but Hello and Exit may come in pieces.
    HANGAR_TRY(WriteServFrame(fd, type, payload.substr(0, kMaxFramePayload)));
    return WriteServFrame(fd, type, payload.substr(kMaxFramePayload));
  }
  char head[5];
  head[0] = static_cast<char>(type);
  const auto n = static_cast<uint32_t>(payload.size());
  head[1] = static_cast<char>(n >> 24);
  head[2] = static_cast<char>(n >> 16);
  head[3] = static_cast<char>(n >> 8);
  head[4] = static_cast<char>(n);
  HANGAR_TRY(SendAll(fd, head, sizeof head));
  return SendAll(fd, payload.data(), payload.size());
}

Result<void> WriteServExit(int fd, int status) {
  const auto s = static_cast<uint32_t>(status);
  const char b[4] = {static_cast<char>(s >> 24), static_cast<char>(s >> 16),
                     static_cast<char>(s >> 8), static_cast<char>(s)};
  return WriteServFrame(fd, ServFrame::Exit, std::string_view(b, 4));
}

Result<ServMessage> ReadServFrame(int fd) {
  char head[5];
  size_t got = 0;
  auto r = RecvAll(fd, head, sizeof head, &got);
  if (!r) {
    if (r.error().code == ErrorCode::NotFound && got > 0) {
      return MakeError(ErrorCode::BadRequest, "serv frame cut short");
    }
    return std::move(r).error();
  }
  if (!KnownType(head[0])) return MakeError(ErrorCode::BadRequest, "unknown serv frame type");
  uint32_t n = 0;
  for (int i = 1; i < 5; ++i) n = (n << 8) | static_cast<unsigned char>(head[i]);
  if (n > kMaxFramePayload) return MakeError(ErrorCode::BadRequest, "serv frame too large");
  ServMessage m;
  m.type = static_cast<ServFrame>(head[0]);
  m.payload.resize(n);
  r = RecvAll(fd, m.payload.data(), n, &got);
  if (!r) {
    if (r.error().code == ErrorCode::NotFound) {
      return MakeError(ErrorCode::BadRequest, "serv frame cut short");
    }
    return std::move(r).error();
  }
  return m;
}

Result<int> ServExitStatus(std::string_view payload) {
  if (payload.size() != 4) return MakeError(ErrorCode::BadRequest, "malformed exit frame");
  uint32_t s = 0;
  for (char c : payload) s = (s << 8) | static_cast<unsigned char>(c);
  return static_cast<int>(s);
}

}  // namespace hangar::api

#include "api/git/stream_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "core/log.h"

namespace hangar::api {

namespace {

Error SysError(const std::string& what) {
  return MakeError(ErrorCode::Internal, what + ": " + std::strerror(errno));
}

}  // namespace

Result<int> ListenTcp(const std::string& host, uint16_t port, uint16_t* bound) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* found = nullptr;
  const std::string where = host + ":" + std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return MakeError(ErrorCode::Internal, "cannot listen on " + where + ": " + gai_strerror(rc));
  }
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    return SysError("socket for " + where);
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool ok = ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 128) == 0;
  ::freeaddrinfo(found);
  if (!ok) {
    auto e = SysError("cannot listen on " + where);
    ::close(fd);
    return e;
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *bound = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return fd;
}

Result<int> ListenUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return MakeError(ErrorCode::BadRequest, "socket path '" + path + "' must be 1 to " +
                                                std::to_string(sizeof addr.sun_path - 1) +
                                                " bytes long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return SysError("socket");
  ::unlink(path.c_str());  // a previous run's socket
  // Created 0600 from the start: no moment where another user could connect.
  mode_t old = ::umask(0177);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::umask(old);
  if (!ok || ::listen(fd, 128) != 0) {
    auto e = SysError("cannot listen on " + path);
    ::close(fd);
    return e;
  }
  return fd;
}

StreamListener::StreamListener(std::string name, int listen_fd, int max_connections,
                               Handler handler, Refuse refuse)
    : name_(std::move(name)),
      listen_fd_(listen_fd),
      max_connections_(max_connections),
      handler_(std::move(handler)),
      refuse_(std::move(refuse)) {}

StreamListener::~StreamListener() {
  Stop();
  ::close(listen_fd_);
}

Result<void> StreamListener::Start() {
  if (::pipe2(wake_, O_CLOEXEC) != 0) return SysError("pipe");
  try {
    acceptor_ = std::thread([this] { AcceptLoop(); });
  } catch (const std::system_error& e) {
    return MakeError(ErrorCode::Internal, std::string("cannot start ") + name_ + ": " + e.what());
  }
  return {};
}

void StreamListener::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : live_) ::shutdown(fd, SHUT_RDWR);
  }
  if (wake_[1] >= 0) {
    char b = 0;
    (void)!::write(wake_[1], &b, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return live_.empty(); });
  for (int& fd : wake_) {
    if (fd >= 0) ::close(std::exchange(fd, -1));
  }
}

void StreamListener::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      Log("git")->error("{}: poll failed: {}", name_, std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;  // EINTR, a connection reset before accept, EMFILE: try again
    std::string peer;
    char host[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
      peer = host;
    } else if (addr.ss_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, host, sizeof host);
      peer = host;
    }
    bool over;
    {
      std::lock_guard lock(mu_);
      over = stopping_ || static_cast<int>(live_.size()) >= max_connections_;
      if (!over) live_.insert(fd);
    }
    if (over) {
      if (refuse_) refuse_(fd);
      ::close(fd);
      continue;
    }
    try {
      std::thread([this, fd, peer = std::move(peer)]() mutable {
        Serve(fd, std::move(peer));
      }).detach();
    } catch (const std::system_error&) {
      std::lock_guard lock(mu_);
      live_.erase(fd);
      ::close(fd);
    }
  }
}

void StreamListener::Serve(int fd, std::string peer) {
  try {
    handler_(fd, peer);
  } catch (const std::exception& e) {
    Log("git")->error("{}: connection failed: {}", name_, e.what());
  }
  std::lock_guard lock(mu_);
  live_.erase(fd);
  ::close(fd);
  idle_.notify_all();
}

}  // namespace hangar::api

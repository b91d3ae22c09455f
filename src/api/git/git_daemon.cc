#include "api/git/git_daemon.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "api/git/git_pump.h"
#include "api/git/ssh_command.h"
#include "core/log.h"
#include "git/pkt_line.h"

namespace hangar::api {

namespace {

// The longest pkt-line (LARGE_PACKET_MAX): 4 length bytes + 65516 of payload.
constexpr size_t kMaxPacket = 65520;

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t w = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

// Reads exactly buf.size() bytes by `deadline`. False on end, error or the deadline (one
// deadline for the whole request, so a client trickling bytes cannot stretch it).
bool RecvAll(int fd, std::span<char> buf, std::chrono::steady_clock::time_point deadline) {
  size_t got = 0;
  while (got < buf.size()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t r = ::recv(fd, buf.data() + got, buf.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

void Refuse(int fd, std::string_view message) { (void)SendAll(fd, git::PktError(message)); }

// The raw socket, both ways.
class SocketTransport final : public GitTransport {
 public:
  explicit SocketTransport(int fd) : fd_(fd) {}
  Result<size_t> ReadIn(std::span<char> buf) override {
    while (true) {
      ssize_t r = ::recv(fd_, buf.data(), buf.size(), 0);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return MakeError(ErrorCode::BadRequest, "connection lost");
    }
  }
  Result<void> WriteOut(std::string_view data) override {
    if (!SendAll(fd_, data)) return MakeError(ErrorCode::BadRequest, "connection lost");
    return {};
  }
  void StopReading() override { ::shutdown(fd_, SHUT_RD); }
  void Abort() override { ::shutdown(fd_, SHUT_RDWR); }

 private:
  const int fd_;
};

}  // namespace

Result<GitDaemonRequest> ParseGitDaemonRequest(std::string_view payload) {
  auto bad = [] { return MakeError(ErrorCode::BadRequest, "malformed request"); };
  size_t space = payload.find(' ');
  size_t nul = payload.find('\0');
  if (space == std::string_view::npos || nul == std::string_view::npos || space > nul) return bad();
  GitDaemonRequest out;
  out.service = std::string(payload.substr(0, space));
  out.path = std::string(payload.substr(space + 1, nul - space - 1));
  if (out.path.empty()) return bad();
  // Then "host=…\0" (optional), and after an empty field the extra parameters, each
  // NUL-terminated.
  std::string_view rest = payload.substr(nul + 1);
  std::vector<std::string_view> fields;
  while (!rest.empty()) {
    size_t end = rest.find('\0');
    if (end == std::string_view::npos) return bad();
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  size_t i = 0;
  if (i < fields.size() && fields[i].starts_with("host=")) ++i;
  if (i < fields.size() && fields[i].empty()) {
    for (++i; i < fields.size(); ++i) {
      if (fields[i].empty()) continue;
      if (!out.git_protocol.empty()) out.git_protocol += ':';
      out.git_protocol += fields[i];
    }
  }
  return out;
}

GitDaemon::GitDaemon(GitDaemonOptions options, services::GitService& git)
    : options_(std::move(options)), git_(git) {}

GitDaemon::~GitDaemon() { Stop(); }

Result<void> GitDaemon::Start() {
  HANGAR_ASSIGN_OR_RETURN(int fd, ListenTcp(options_.host, options_.port, &port_));
  listener_ = std::make_unique<StreamListener>(
      "git://", fd, options_.max_connections,
      [this](int c, const std::string& peer) { Handle(c, peer); },
      [](int c) { Refuse(c, "too many connections; retry later"); });
  return listener_->Start();
}

void GitDaemon::Stop() {
  if (listener_) listener_->Stop();
}

void GitDaemon::Handle(int fd, const std::string& peer) {
  const auto deadline = std::chrono::steady_clock::now() + options_.request_timeout;
  char head[4];
  if (!RecvAll(fd, head, deadline)) return;  // gone, or not done by the deadline
  size_t len = 0;
  for (char c : head) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return Refuse(fd, "protocol error: bad packet length");
    len = len * 16 + static_cast<size_t>(v);
  }
  if (len <= 4 || len > kMaxPacket) return Refuse(fd, "protocol error: bad packet length");
  std::string payload(len - 4, '\0');
  if (!RecvAll(fd, payload, deadline)) return;
  auto request = ParseGitDaemonRequest(payload);
  if (!request) return Refuse(fd, request.error().message);
  if (request->service != "git-upload-pack") {
    return Refuse(fd, "service not enabled: git:// is read-only");
  }
  auto id = ParseGitRepoPath(request->path);
  // Anonymous: a private or missing repo is "not found" alike.
  if (!id) return Refuse(fd, "repository not found");
  const Principal anonymous = Principal::Anonymous();
  auto conn = git_.Connect(anonymous, *id, services::GitRpc::UploadPack, request->git_protocol,
                           services::GitPrincipalKey(anonymous, peer));
  if (!conn) {
    auto code = conn.error().code;
    bool hidden = code == ErrorCode::RepoNotFound || code == ErrorCode::Unauthorized;
    return Refuse(fd, hidden ? "repository not found" : conn.error().message);
  }
  SocketTransport transport(fd);
  auto status = PumpGit(**conn, transport, options_.idle_timeout);
  Log("git")->info("git:// upload-pack {} from {}: {}", id->UrlPath(), peer,
                   status ? "exit " + std::to_string(*status) : status.error().message);
}

}  // namespace hangar::api

#include "api/git/serv_socket.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "api/git/git_pump.h"
#include "api/git/serv_protocol.h"
#include "api/git/ssh_command.h"
#include "core/log.h"
#include "git/pkt_line.h"

namespace hangar::api {

namespace {

using services::GitRpc;

void SetReceiveTimeout(int fd, std::chrono::seconds t) {
  timeval tv{};
  tv.tv_sec = t.count();  // 0: no timeout
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// Connections beyond ServSocketOptions::max_sessions kept for key lookups.
constexpr int kKeyLookupRoom = 32;

// Only the hub's own user (and root) may speak for sshd.
bool PeerTrusted(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  return cred.uid == ::geteuid() || cred.uid == 0;
}

// The client's stdin as Stdin frames, ended by StdinEnd.
class ServTransport final : public GitTransport {
 public:
  explicit ServTransport(int fd) : fd_(fd) {}

  Result<size_t> ReadIn(std::span<char> buf) override {
    while (pending_.size() == taken_) {
      if (ended_) return size_t{0};
      HANGAR_ASSIGN_OR_RETURN(auto m, ReadServFrame(fd_));
      if (m.type == ServFrame::StdinEnd) {
        ended_ = true;
      } else if (m.type == ServFrame::Stdin) {
        pending_ = std::move(m.payload);
        taken_ = 0;
      } else {
        return MakeError(ErrorCode::BadRequest, "unexpected serv frame");
      }
    }
    size_t n = std::min(buf.size(), pending_.size() - taken_);
    std::copy_n(pending_.data() + taken_, n, buf.data());
    taken_ += n;
    return n;
  }
  Result<void> WriteOut(std::string_view data) override {
    return WriteServFrame(fd_, ServFrame::Stdout, data);
  }
  void StopReading() override { ::shutdown(fd_, SHUT_RD); }
  void Abort() override { ::shutdown(fd_, SHUT_RDWR); }

 private:
  const int fd_;
  std::string pending_;
  size_t taken_ = 0;
  bool ended_ = false;
};

// A git command refused: an ERR packet, which git shows as "remote error: …", and a
// failing exit.
void RefuseGit(int fd, std::string_view message) {
  (void)WriteServFrame(fd, ServFrame::Stdout, git::PktError(message));
  (void)WriteServExit(fd, 128);
}

// Any other command refused: the message on stderr.
void RefuseOther(int fd, std::string_view message) {
  (void)WriteServFrame(fd, ServFrame::Stderr, "hangar: " + std::string(message) + "\n");
  (void)WriteServExit(fd, 1);
}

std::string Str(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

ServSocket::ServSocket(ServSocketOptions options, services::GitService& git,
                       services::SshKeyService& keys)
    : options_(std::move(options)), git_(git), keys_(keys) {}

ServSocket::~ServSocket() { Stop(); }

Result<void> ServSocket::Start() {
  HANGAR_ASSIGN_OR_RETURN(int fd, ListenUnix(options_.path));
  listener_ = std::make_unique<StreamListener>(
      "serv socket", fd, options_.max_sessions + kKeyLookupRoom,
      [this](int c, const std::string&) { Handle(c); },
      [](int c) { RefuseGit(c, "too many SSH sessions at once; retry later"); });
  return listener_->Start();
}

void ServSocket::Stop() {
  if (listener_) listener_->Stop();
}

void ServSocket::Handle(int fd) {
  if (!PeerTrusted(fd)) {
    Log("git")->warn("serv socket: refused a process of another user");
    return;
  }
  SetReceiveTimeout(fd, options_.hello_timeout);
  auto hello = ReadServFrame(fd);
  if (!hello || hello->type != ServFrame::Hello) return;
  boost::system::error_code ec;
  auto parsed = boost::json::parse(hello->payload, ec);
  if (ec || !parsed.is_object()) return RefuseOther(fd, "malformed hello");
  const auto& o = parsed.as_object();
  const std::string op = Str(o, "op");
  if (op == "keys") {
    // sshd's AuthorizedKeysCommand: the key's id, or nothing.
    auto key = keys_.Find(Str(o, "type"), Str(o, "blob"));
    if (!key) {
      (void)WriteServExit(fd, 1);
      return;
    }
    (void)WriteServFrame(fd, ServFrame::Stdout, std::to_string(key->id));
    (void)WriteServExit(fd, 0);
    return;
  }
  const auto* key_id = o.if_contains("key_id");
  const auto* command = o.if_contains("command");
  if (op != "serv" || !key_id || !key_id->is_int64() || (command && !command->is_string())) {
    return RefuseOther(fd, "malformed hello");
  }
  SetReceiveTimeout(fd, std::chrono::seconds(0));
  Serv(fd, key_id->as_int64(), Str(o, "command"), Str(o, "git_protocol"), Str(o, "client"));
}

void ServSocket::Serv(int fd, int64_t key_id, const std::string& command,
                      const std::string& git_protocol, const std::string& client) {
  auto log = Log("git");
  // Counted from here to the end of the session.
  struct Count {
    std::atomic<int>& n;
    ~Count() { --n; }
  } counted{sessions_};
  if (++sessions_ > options_.max_sessions) {
    return RefuseGit(fd, "too many SSH sessions at once; retry later");
  }
  auto who = keys_.PrincipalFor(key_id);
  if (!who) return RefuseGit(fd, who.error().message);
  if (command.empty()) {
    // An interactive login, as a forge answers it.
    (void)WriteServFrame(fd, ServFrame::Stderr,
                         "Hi " + who->name + "! You've successfully authenticated, but Hangar " +
                             "does not provide shell access.\n");
    (void)WriteServExit(fd, 1);
    return;
  }
  auto cmd = ParseSshCommand(command);
  if (!cmd) return RefuseGit(fd, cmd.error().message);
  const std::string repo = cmd->repo.UrlPath();
  switch (cmd->verb) {
    case SshVerb::LfsTransfer:
      // git-lfs then falls back to git-lfs-authenticate and HTTP (git-lfs.md §11.1).
      return RefuseOther(fd, "git-lfs-transfer is not supported; use git-lfs-authenticate");
    case SshVerb::LfsAuthenticate: {
      bool upload = cmd->operation == "upload";
      auto credential = git_.LfsCredential(*who, cmd->repo, upload, options_.credential_key,
                                           options_.lfs_credential_ttl);
      if (!credential) return RefuseOther(fd, credential.error().message);
      boost::json::object answer;
      answer["href"] = options_.public_url + "/" + repo + ".git/info/lfs";
      answer["header"] = boost::json::object{{"Authorization", "Bearer " + *credential}};
      answer["expires_in"] = options_.lfs_credential_ttl.count();
      (void)WriteServFrame(fd, ServFrame::Stdout, boost::json::serialize(answer) + "\n");
      (void)WriteServExit(fd, 0);
      return;
    }
    case SshVerb::UploadPack:
    case SshVerb::ReceivePack:
      break;
  }
  GitRpc rpc = cmd->verb == SshVerb::UploadPack ? GitRpc::UploadPack : GitRpc::ReceivePack;
  // A client that waits is told why, on its stderr (git shows it as it comes).
  auto tell = [fd](int ahead) {
    (void)WriteServFrame(
        fd, ServFrame::Stderr,
        "hangar: waiting for a free git slot (" + std::to_string(ahead) + " ahead in the queue)\n");
  };
  auto conn = git_.Connect(*who, cmd->repo, rpc, git_protocol,
                           services::GitPrincipalKey(*who, client), tell);
  if (!conn) return RefuseGit(fd, conn.error().message);
  ServTransport transport(fd);
  auto status = PumpGit(**conn, transport, options_.idle_timeout);
  log->info("ssh {} {} by {}: {}", services::GitRpcName(rpc), repo, who->name,
            status ? "exit " + std::to_string(*status) : status.error().message);
  (void)WriteServExit(fd, status ? *status : 1);
}

}  // namespace hangar::api

#include "cli/ssh_commands.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "api/git/serv_protocol.h"
#include "config/config.h"

namespace hangar::cli {

namespace {

namespace fs = std::filesystem;
using api::ServFrame;

struct SshFlags {
  std::string config_file;
  std::string data_dir;
};

// The serv socket's path from the hub's config. Errors: those of LoadConfig.
Result<std::string> SocketPath(const SshFlags& f) {
  config::LoadOptions opts;
  if (!f.config_file.empty()) opts.config_file = f.config_file;
  if (!f.data_dir.empty()) opts.overrides.emplace_back("storage.data_dir", f.data_dir);
  HANGAR_ASSIGN_OR_RETURN(auto cfg, config::LoadConfig(opts));
  return cfg.ssh.socket;
}

// A connection to the hub's serv socket. Errors: Unavailable "the hub is not running".
Result<int> Connect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return MakeError(ErrorCode::BadRequest, "socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return MakeError(ErrorCode::Unavailable,
                     "the hub is not reachable at " + path + " (" + std::strerror(errno) + ")");
  }
  return fd;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool WriteFd(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

// Forwards this process's stdin to the hub until it ends. Runs on a thread of its own; the
// process exits (with the hub's status) without waiting for it.
void ForwardStdin(int fd) {
  std::string buf(64 << 10, '\0');
  while (true) {
    ssize_t n = ::read(0, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!api::WriteServFrame(fd, ServFrame::Stdin, std::string_view(buf.data(), n))) return;
  }
  (void)api::WriteServFrame(fd, ServFrame::StdinEnd, "");
}

int Serv(const SshFlags& f, const std::string& key) {
  auto fail = [](const std::string& m) {
    std::fprintf(stderr, "hangar: %s\n", m.c_str());
    return 1;
  };
  if (!key.starts_with("key-")) return fail("serv: expected key-<id>");
  char* end = nullptr;
  long long id = std::strtoll(key.c_str() + 4, &end, 10);
  if (*end != '\0' || id <= 0) return fail("serv: expected key-<id>");
  auto path = SocketPath(f);
  if (!path) return fail(path.error().message);
  auto fd = Connect(*path);
  if (!fd) return fail(fd.error().message);
  // SSH_CONNECTION: "<client ip> <client port> <server ip> <server port>".
  std::string client = Env("SSH_CONNECTION");
  client = client.substr(0, client.find(' '));
  boost::json::object hello{{"op", "serv"},
                            {"key_id", static_cast<int64_t>(id)},
                            {"command", Env("SSH_ORIGINAL_COMMAND")},
                            {"git_protocol", Env("GIT_PROTOCOL")},
                            {"client", client}};
  if (!api::WriteServFrame(*fd, ServFrame::Hello, boost::json::serialize(hello))) {
    return fail("the hub closed the connection");
  }
  std::thread(ForwardStdin, *fd).detach();
  while (true) {
    auto m = api::ReadServFrame(*fd);
    if (!m) return fail("the hub closed the connection: " + m.error().message);
    switch (m->type) {
      case ServFrame::Stdout:
        if (!WriteFd(1, m->payload)) return 1;
        break;
      case ServFrame::Stderr:
        (void)WriteFd(2, m->payload);
        break;
      case ServFrame::Exit: {
        auto status = api::ServExitStatus(m->payload);
        // Without waiting for the stdin thread, which may be blocked reading.
        std::_Exit(status ? *status : 1);
      }
      default:
        return fail("unexpected frame from the hub");
    }
  }
}

int Keys(const SshFlags& f, const std::string& type, const std::string& blob) {
  auto path = SocketPath(f);
  if (!path) {
    std::fprintf(stderr, "hangar keys: %s\n", path.error().message.c_str());
    return 1;
  }
  auto fd = Connect(*path);
  if (!fd) {
    std::fprintf(stderr, "hangar keys: %s\n", fd.error().message.c_str());
    return 1;
  }
  boost::json::object hello{{"op", "keys"}, {"type", type}, {"blob", blob}};
  if (!api::WriteServFrame(*fd, ServFrame::Hello, boost::json::serialize(hello))) return 1;
  std::string id;
  while (true) {
    auto m = api::ReadServFrame(*fd);
    if (!m) return 1;
    if (m->type == ServFrame::Stdout) id += m->payload;
    if (m->type != ServFrame::Exit) continue;
    auto status = api::ServExitStatus(m->payload);
    if (!status || *status != 0) return 0;  // unknown key: no line, sshd refuses it
    break;
  }
  // The forced command runs this very binary with the same config. sshd splits it at
  // blanks and it sits inside "…": no path may hold a blank, a quote or a backslash.
  std::error_code ec;
  std::vector<std::string> words = {fs::read_symlink("/proc/self/exe", ec).string(), "serv"};
  if (!f.config_file.empty())
    words.insert(words.end(), {"--config", fs::absolute(f.config_file).string()});
  if (!f.data_dir.empty())
    words.insert(words.end(), {"--data-dir", fs::absolute(f.data_dir).string()});
  words.push_back("key-" + id);
  std::string command;
  for (const auto& w : words) {
    if (ec || w.empty() || w.find_first_of("\" \t\n\\") != std::string::npos) {
      std::fprintf(stderr, "hangar keys: paths must not hold blanks, quotes or backslashes\n");
      return 1;
    }
    command += (command.empty() ? "" : " ") + w;
  }
  std::printf("restrict,command=\"%s\" %s %s\n", command.c_str(), type.c_str(), blob.c_str());
  return 0;
}

}  // namespace

void AddSshCommands(CLI::App& app, std::optional<int>* exit_code) {
  auto flags = std::make_shared<SshFlags>();
  auto keys_args = std::make_shared<std::pair<std::string, std::string>>();
  auto* keys = app.add_subcommand("keys", "sshd's AuthorizedKeysCommand: the line of a known key");
  keys->add_option("--config", flags->config_file, "the hub's TOML config file");
  keys->add_option("--data-dir", flags->data_dir, "the hub's data directory");
  keys->add_option("type", keys_args->first, "key type (sshd's %t)")->required();
  keys->add_option("blob", keys_args->second, "base64 key (sshd's %k)")->required();
  keys->callback([=] { *exit_code = Keys(*flags, keys_args->first, keys_args->second); });

  auto key = std::make_shared<std::string>();
  auto* serv = app.add_subcommand("serv", "sshd's forced command: git over SSH through the hub");
  serv->add_option("--config", flags->config_file, "the hub's TOML config file");
  serv->add_option("--data-dir", flags->data_dir, "the hub's data directory");
  serv->add_option("key", *key, "key-<id>, as `hangar keys` wrote it")->required();
  serv->callback([=] { *exit_code = Serv(*flags, *key); });
}

}  // namespace hangar::cli

#include "services/gateway/runtime_supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/log.h"
#include "core/util.h"
#include "net/http_client.h"

extern char** environ;

namespace hangar::services {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr auto kIdleDrain = std::chrono::seconds(60);  // an unnamed, unused runtime's life
constexpr auto kMaxBackoff = std::chrono::seconds(30);

// A free loopback port (the kernel's choice), or 0.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

std::string Replaced(std::string arg, const std::map<std::string, std::string>& vars) {
  for (const auto& [name, value] : vars) {
    for (size_t at = arg.find(name); at != std::string::npos;
         at = arg.find(name, at + value.size())) {
      arg.replace(at, name.size(), value);
    }
  }
  return arg;
}

// The last `n` bytes written to the file at `path` after offset `from`, on one line.
std::string Tail(const fs::path& path, uint64_t from, size_t n = 600) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  if (ec || size <= from) return "";
  uint64_t start = std::max<uint64_t>(from, size > n ? size - n : 0);
  in.seekg(static_cast<std::streamoff>(start));
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// Writes `src` to `dest`: a hard link to the file behind it when it is one whole local
// file (the blob store's object), else a copy of its bytes.
Result<void> Materialize(ByteSource& src, uint64_t size, const fs::path& dest) {
  if (auto region = src.Region(); region && region->offset == 0 && region->length == size) {
    std::string proc = "/proc/self/fd/" + std::to_string(region->fd);
    if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, dest.c_str(), AT_SYMLINK_FOLLOW) == 0) return {};
  }
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  std::vector<char> buf(1 << 20);
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, src.Read(buf));
    if (n == 0) break;
    out.write(buf.data(), static_cast<std::streamsize>(n));
  }
  out.close();
  if (!out) return MakeError(ErrorCode::Internal, "cannot write " + dest.string());
  return {};
}

}  // namespace

struct RuntimeSupervisor::Instance {
  std::string key, runtime, model;
  RuntimeSpec spec;
  db::VersionRecord version;
  fs::path log;
  pid_t pid = -1;
  int port = 0;
  enum class State { Starting, Ready, Failed, Draining } state = State::Starting;
  std::string error;   // why it is not running, for everyone
  std::string detail;  // the end of its log since its last start, for site admins
  uint64_t log_from = 0;
  int64_t restarts = 0;
  Clock::time_point started{}, next_start{}, last_used = Clock::now(), drain_since{};
  std::shared_ptr<std::atomic<int>> in_flight = std::make_shared<std::atomic<int>>(0);
};

// A process Start made.
struct RuntimeSupervisor::Spawned {
  pid_t pid = -1;
  int port = 0;
  fs::path log;
  uint64_t log_from = 0;  // the log's size before it started
};

RuntimeSupervisor::RuntimeSupervisor(RepoService& repos, ContentService& content,
                                     SupervisorOptions options)
    : repos_(repos), content_(content), options_(std::move(options)) {
  if (!options_.templates.empty()) loop_ = std::thread([this] { Loop(); });
}

RuntimeSupervisor::~RuntimeSupervisor() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (loop_.joinable()) loop_.join();
  for (auto& [key, in] : instances_) Stop(in->pid);
}

std::string RuntimeSupervisor::ProtocolOf(const std::string& name) const {
  auto it = options_.templates.find(name);
  return it == options_.templates.end() ? "" : it->second.protocol;
}

std::shared_ptr<RuntimeSupervisor::Instance> RuntimeSupervisor::Ensure(const std::string& runtime,
                                                                       const std::string& model,
                                                                       const db::VersionRecord& v) {
  std::string key = runtime + "/" + model + "/" + std::to_string(v.version);
  auto& slot = instances_[key];
  if (!slot || slot->state == Instance::State::Draining) {
    auto in = std::make_shared<Instance>();
    in->key = key;
    in->runtime = runtime;
    in->model = model;
    in->spec = options_.templates.at(runtime);
    if (in->spec.ready_path.empty())
      in->spec.ready_path = in->spec.protocol == "oip" ? "/v2/health/ready" : "/health";
    in->version = v;
    if (slot) instances_[key + "#draining" + std::to_string(slot->pid)] = slot;
    slot = in;
  }
  return slot;
}

Result<RuntimeSupervisor::Lease> RuntimeSupervisor::Acquire(const std::string& runtime,
                                                            const std::string& model,
                                                            const db::VersionRecord& version,
                                                            std::chrono::milliseconds wait,
                                                            bool detailed) {
  if (!options_.templates.count(runtime))
    return MakeError(ErrorCode::NotFound, "no runtime template '" + runtime + "'");
  std::unique_lock lock(mu_);
  auto in = Ensure(runtime, model, version);
  in->last_used = Clock::now();
  changed_.notify_all();
  bool settled = changed_.wait_for(lock, wait, [&] {
    return stop_ || in->state == Instance::State::Ready ||
           (in->state == Instance::State::Failed && !in->error.empty());
  });
  if (in->state == Instance::State::Failed)
    return MakeError(ErrorCode::Unavailable, "runtime '" + runtime + "' for " + model +
                                                 " version " + std::to_string(version.version) +
                                                 " is not running: " + in->error +
                                                 (detailed ? "; log: " + in->detail
                                                           : " (site admins see its log in the "
                                                             "route's metrics)"));
  if (!settled || in->state != Instance::State::Ready)
    return MakeError(ErrorCode::GatewayTimeout, "runtime '" + runtime + "' for " + model +
                                                    " was not ready within " +
                                                    std::to_string(wait.count()) + " ms");
  in->in_flight->fetch_add(1);
  Lease lease;
  lease.url = "http://127.0.0.1:" + std::to_string(in->port);
  auto counter = in->in_flight;
  lease.hold = std::shared_ptr<void>(nullptr, [counter](void*) { counter->fetch_sub(1); });
  return lease;
}

void RuntimeSupervisor::Retain(const std::vector<Want>& wanted) {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> current;  // runtime/model -> key of the wanted version
  for (const auto& w : wanted) {
    if (!options_.templates.count(w.runtime)) continue;
    current[w.runtime + "/" + w.model] = Ensure(w.runtime, w.model, w.version)->key;
  }
  auto now = Clock::now();
  for (auto& [key, in] : instances_) {
    if (in->state == Instance::State::Draining) continue;
    auto it = current.find(in->runtime + "/" + in->model);
    bool superseded =
        it != current.end() && it->second != key && now - in->last_used > kSupersededGrace;
    bool orphan = it == current.end() &&
                  (now - in->last_used > kIdleDrain || in->state == Instance::State::Failed);
    if (superseded || orphan) {
      Log("gateway")->info("runtime {}: draining ({})", key, superseded ? "superseded" : "unused");
      in->state = Instance::State::Draining;
      in->drain_since = now;
    }
  }
  changed_.notify_all();
}

std::vector<RuntimeState> RuntimeSupervisor::States() {
  static constexpr const char* kNames[] = {"starting", "ready", "failed", "draining"};
  std::lock_guard lock(mu_);
  std::vector<RuntimeState> out;
  for (const auto& [key, in] : instances_) {
    out.push_back(RuntimeState{in->runtime, in->model, in->version.version,
                               kNames[static_cast<int>(in->state)], in->port, in->restarts,
                               in->in_flight->load(), in->error, in->detail});
  }
  return out;
}

void RuntimeSupervisor::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    changed_.wait_for(lock, options_.tick);
    if (stop_) break;
    // Step may release the lock: Acquire and Retain may add instances meanwhile (a map's
    // iterators stay valid); only this loop erases them.
    for (auto it = instances_.begin(); it != instances_.end() && !stop_;) {
      auto in = it->second;
      Step(lock, *in);
      bool gone = in->state == Instance::State::Draining && in->pid < 0;
      it = gone ? instances_.erase(it) : std::next(it);
    }
    changed_.notify_all();
  }
}

// Runs fn() with `lock` released.
template <typename F>
auto Unlocked(std::unique_lock<std::mutex>& lock, F fn) {
  lock.unlock();
  auto out = fn();
  lock.lock();
  return out;
}

// How a process ended, from waitpid's status.
std::string Ended(int status) {
  if (WIFEXITED(status)) return "it exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "it was killed by signal " + std::to_string(WTERMSIG(status));
  return "it ended";
}

void RuntimeSupervisor::Fail(Instance& in, std::string why, Clock::duration backoff) {
  in.error = std::move(why);
  in.detail = Tail(in.log, in.log_from);
  in.state = Instance::State::Failed;
  in.next_start = Clock::now() + backoff;
  Log("gateway")->warn("runtime {}: {}; log: {}", in.key, in.error, in.detail);
}

void RuntimeSupervisor::Step(std::unique_lock<std::mutex>& lock, Instance& in) {
  auto now = Clock::now();
  if (in.pid > 0) {
    int status = 0;
    if (waitpid(in.pid, &status, WNOHANG) == in.pid) {
      in.pid = -1;
      if (in.state == Instance::State::Draining) return;
      Fail(in, Ended(status),
           std::min<Clock::duration>(kMaxBackoff,
                                     std::chrono::seconds(1 << std::min<int64_t>(in.restarts, 5))));
      return;
    }
  }
  switch (in.state) {
    case Instance::State::Draining:
      if (in.pid > 0 &&
          (in.in_flight->load() == 0 || now - in.drain_since > options_.drain_timeout)) {
        pid_t pid = in.pid;
        Unlocked(lock, [pid] {
          Stop(pid);
          return 0;
        });
        in.pid = -1;
      }
      return;
    case Instance::State::Failed:
      if (now < in.next_start) return;
      ++in.restarts;
      in.state = Instance::State::Starting;
      StepStarting(lock, in);
      return;
    case Instance::State::Starting:
      StepStarting(lock, in);
      return;
    case Instance::State::Ready:
      return;
  }
}

void RuntimeSupervisor::StepStarting(std::unique_lock<std::mutex>& lock, Instance& in) {
  if (in.pid < 0) {
    auto spawned = Unlocked(lock, [&] { return Start(in); });
    if (in.state != Instance::State::Starting) {  // drained meanwhile
      if (spawned) in.pid = spawned->pid;
      return;
    }
    if (!spawned) return Fail(in, spawned.error().message, kMaxBackoff);
    in.pid = spawned->pid;
    in.port = spawned->port;
    in.log = spawned->log;
    in.log_from = spawned->log_from;
    in.started = Clock::now();
  }
  std::string url = "http://127.0.0.1:" + std::to_string(in.port) + in.spec.ready_path;
  bool ready = Unlocked(lock, [&url] {
    net::HttpClient probe;
    net::HttpRequest req;
    req.url = url;
    req.timeout = std::chrono::milliseconds(300);
    auto r = probe.Perform(req);
    return r && r->status >= 200 && r->status < 300;
  });
  if (in.state != Instance::State::Starting || in.pid < 0) return;
  if (ready) {
    in.state = Instance::State::Ready;
    in.error.clear();
    in.detail.clear();
    Log("gateway")->info("runtime {}: ready on port {}", in.key, in.port);
  } else if (Clock::now() - in.started > std::chrono::seconds(in.spec.start_timeout_s)) {
    pid_t pid = in.pid;
    Unlocked(lock, [pid] {
      Stop(pid);
      return 0;
    });
    in.pid = -1;
    Fail(in,
         "it was not ready within " + std::to_string(in.spec.start_timeout_s) +
             " s (start_timeout_s)",
         kMaxBackoff);
  }
}

Result<fs::path> RuntimeSupervisor::Snapshot(const Instance& in) {
  const db::VersionRecord& v = in.version;
  fs::path dir = options_.dir / "snapshots" /
                 (in.model + "-v" + std::to_string(v.version) + "-" + v.commit.substr(0, 12));
  if (fs::exists(dir / ".complete")) return dir;
  auto type = ParseRepoType(v.repo_type);
  size_t slash = v.repo.find('/');
  auto oid = Oid::ParseHex(v.commit);
  if (!type || slash == std::string::npos || !oid)
    return MakeError(ErrorCode::Internal, "version pins no readable repo: " + v.repo);
  HANGAR_ASSIGN_OR_RETURN(RepoId id,
                          RepoId::Parse(*type, v.repo.substr(0, slash), v.repo.substr(slash + 1)));
  Principal hub;  // the hub itself reads the repo
  hub.anonymous = false;
  hub.is_admin = true;
  hub.name = "hangar";
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(hub, id, Access::Read));
  HANGAR_ASSIGN_OR_RETURN(EntryList files, content_.ListTree(repo, *oid, "", /*recursive=*/true));
  fs::path tmp = dir.string() + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  for (const Entry& e : *files) {
    if (e.git.is_dir || e.git.mode == 0160000 || e.git.mode == 0120000) continue;
    fs::path dest = tmp / e.git.path;
    fs::create_directories(dest.parent_path(), ec);
    HANGAR_ASSIGN_OR_RETURN(auto bytes, content_.Open(repo, e, /*raw=*/false, 0, std::nullopt));
    HANGAR_TRY(Materialize(*bytes, e.Size(), dest));
  }
  std::ofstream(tmp / ".complete") << v.commit << "\n";
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec)
    return MakeError(ErrorCode::Internal,
                     "cannot place the snapshot " + dir.string() + ": " + ec.message());
  return dir;
}

Result<RuntimeSupervisor::Spawned> RuntimeSupervisor::Start(const Instance& in) {
  HANGAR_ASSIGN_OR_RETURN(fs::path snapshot, Snapshot(in));
  Spawned out;
  out.port = FreePort();
  if (out.port == 0) return MakeError(ErrorCode::Internal, "no free port");
  std::map<std::string, std::string> vars{{"{snapshot}", snapshot.string()},
                                          {"{port}", std::to_string(out.port)},
                                          {"{model}", in.model},
                                          {"{version}", std::to_string(in.version.version)}};
  std::vector<std::string> argv;
  for (const auto& a : in.spec.command) argv.push_back(Replaced(a, vars));
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::error_code ec;
  fs::create_directories(options_.dir / "logs", ec);
  out.log = options_.dir / "logs" /
            (in.model + "-v" + std::to_string(in.version.version) + "-" + in.runtime + ".log");
  out.log_from = fs::exists(out.log, ec) ? fs::file_size(out.log, ec) : 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: stopped whole
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return MakeError(ErrorCode::Unavailable,
                     "cannot start '" + argv[0] + "': " + std::strerror(rc));
  out.pid = pid;
  Log("gateway")->info("runtime {}: started pid {} on port {} from {}", in.key, pid, out.port,
                       snapshot.string());
  return out;
}

void RuntimeSupervisor::Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(-pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace hangar::services

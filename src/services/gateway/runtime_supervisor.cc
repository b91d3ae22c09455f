#include "services/gateway/runtime_supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

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
constexpr auto kStableRun = std::chrono::seconds(30);  // ready this long: back-off reset
constexpr uint64_t kMaxLogBytes = 16 << 20;            // a runtime's log is cut back past it

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
  // Printable ASCII only: it goes into JSON answers and the hub's log.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = ' ';
  }
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
  Clock::time_point started{}, next_start{}, last_used = Clock::now(), drain_since{}, ready_since{};
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
  auto deadline = Clock::now() + wait;
  std::shared_ptr<Instance> in;
  bool settled = false;
  // An instance drained while this request waited for it (its alias moved away and back)
  // is replaced by a new one, waited for in the time left.
  while (!settled && Clock::now() < deadline) {
    in = Ensure(runtime, model, version);
    in->last_used = Clock::now();
    changed_.notify_all();
    changed_.wait_until(lock, deadline,
                        [&] { return stop_ || in->state != Instance::State::Starting; });
    settled = stop_ || in->state == Instance::State::Ready ||
              (in->state == Instance::State::Failed && !in->error.empty());
  }
  if (!in) in = Ensure(runtime, model, version);
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
  // The versions routes name now (several per model: champion and staging routes), and
  // the (runtime, model) pairs they are of.
  std::set<std::string> keys, pairs;
  for (const auto& w : wanted) {
    if (!options_.templates.count(w.runtime)) continue;
    keys.insert(Ensure(w.runtime, w.model, w.version)->key);
    pairs.insert(w.runtime + "/" + w.model);
  }
  auto now = Clock::now();
  for (auto& [key, in] : instances_) {
    if (in->state == Instance::State::Draining || keys.count(key)) continue;
    bool named = pairs.count(in->runtime + "/" + in->model) > 0;
    bool superseded = named && now - in->last_used > kSupersededGrace;
    bool orphan =
        !named && (now - in->last_used > kIdleDrain || in->state == Instance::State::Failed);
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
    // A chatty runtime's log is cut back (it appends, so it writes on at the new end).
    std::error_code ec;
    if (fs::file_size(in.log, ec) > kMaxLogBytes && !ec) {
      fs::resize_file(in.log, 0, ec);
      in.log_from = 0;
    }
    int status = 0;
    if (waitpid(in.pid, &status, WNOHANG) == in.pid) {
      in.pid = -1;
      if (in.state == Instance::State::Draining) return;
      // One that served a while before it died starts its back-off afresh.
      if (in.state == Instance::State::Ready && now - in.ready_since > kStableRun) in.restarts = 0;
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
    in.ready_since = Clock::now();
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
  const Principal hub = Principal::Hub();  // the hub itself: sees every repo and model
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
  // The hub's secrets stay with the hub: no HANGAR_*, AWS_* or *TOKEN*/*SECRET*/*PASSWORD*
  // variables reach a runtime.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view var(*e);
    std::string name = AsciiLower(var.substr(0, var.find('=')));
    bool secret = name.starts_with("hangar_") || name.starts_with("aws_") ||
                  name.find("token") != std::string::npos ||
                  name.find("secret") != std::string::npos ||
                  name.find("password") != std::string::npos;
    if (!secret) env.emplace_back(var);
  }
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  int log_fd = open(out.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return MakeError(ErrorCode::Internal, "cannot open " + out.log.string());
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: a runtime dies with the hub
  // even when the hub is killed. The child calls only async-signal-safe functions.
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the hub died before the line above
    setpgid(0, 0);                        // its own group: stopped whole
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    execvpe(cargv[0], cargv.data(), cenv.data());
    const char msg[] = "hangar: cannot execute the runtime's command\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(log_fd);
  if (null_fd >= 0) close(null_fd);
  if (pid < 0)
    return MakeError(ErrorCode::Unavailable,
                     "cannot start '" + argv[0] + "': " + std::strerror(errno));
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

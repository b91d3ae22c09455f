#include "git/command.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace hangar::git {
namespace {

// The absolute path of the `git` on PATH, looked up once: spawning it directly skips the
// failed execve of every PATH entry before it (a page can start several gits). "" when
// none is found (posix_spawnp then reports the failure).
const std::string& GitBinary() {
  static const std::string path = [] {
    const char* env = std::getenv("PATH");
    std::string_view dirs = env ? env : "/usr/local/bin:/usr/bin:/bin";
    while (!dirs.empty()) {
      auto colon = dirs.find(':');
      std::string dir(dirs.substr(0, colon));
      dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
      if (!dir.starts_with('/')) continue;  // relative entries depend on the cwd: skipped
      std::string candidate = dir + "/git";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::string();
  }();
  return path;
}

using Clock = std::chrono::steady_clock;

Error SysError(std::string_view what) {
  return MakeError(ErrorCode::Internal, std::string(what) + ": " + std::strerror(errno));
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Milliseconds until `deadline` for poll(), at least 0.
int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
}

// write() that turns a closed pipe into EPIPE without delivering SIGPIPE, whatever the
// process-wide disposition is: SIGPIPE is blocked for this thread around the call and a
// SIGPIPE we caused is consumed before unblocking (the MSG_NOSIGNAL of pipes).
ssize_t WriteNoSigpipe(int fd, const char* data, size_t n) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t r;
  do {
    r = ::write(fd, data, n);
  } while (r < 0 && errno == EINTR);
  int saved = errno;
  // The kernel raises SIGPIPE also when a write was cut short by the reader going away
  // (r > 0), so check what is pending rather than r.
  if (!was_pending) {
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE)) {
      timespec zero{};
      sigtimedwait(&pipe_set, nullptr, &zero);
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return r;
}

bool HasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The child's environment: ours minus GIT_* and locale variables, plus fixed settings,
// plus the command's own.
std::vector<std::string> BuildEnv(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (HasPrefix(kv, "GIT_") || HasPrefix(kv, "LC_") || HasPrefix(kv, "LANG")) continue;
    bool overridden = false;
    for (const auto& [k, v] : extra) {
      if (kv.size() > k.size() && HasPrefix(kv, k) && kv[k.size()] == '=') overridden = true;
    }
    if (!overridden) env.emplace_back(kv);
  }
  env.emplace_back("LC_ALL=C");
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  env.emplace_back("GIT_NO_REPLACE_OBJECTS=1");
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

struct Command::Spawned {
  pid_t pid = -1;
  int pidfd = -1;
  int in = -1, out = -1, err = -1;  // our ends
  Clock::time_point deadline;
};

// Run's exchange with a spawned child: writes `stdin_data` to its stdin, collects stdout
// (up to `max_output`) and stderr (up to kMaxStderr), until both are at EOF and the child
// has exited. Kills the child's process group at the deadline, when stdout outgrows
// `max_output` or when poll() fails; closes the pipes it is done with (set to -1 in `s`).
class Command::RunLoop {
 public:
  RunLoop(Spawned& s, std::string_view stdin_data, size_t max_output)
      : s_(s), stdin_data_(stdin_data), max_output_(max_output) {}

  // Polls until stdout and stderr are closed and the child has exited, or poll() fails.
  void Poll() {
    while (s_.out >= 0 || s_.err >= 0 || !exited_) {
      pollfd fds[4];
      int n = 0, i_in = -1, i_out = -1, i_err = -1, i_pid = -1;
      if (s_.in >= 0) fds[i_in = n++] = {s_.in, POLLOUT, 0};
      if (s_.out >= 0) fds[i_out = n++] = {s_.out, POLLIN, 0};
      if (s_.err >= 0) fds[i_err = n++] = {s_.err, POLLIN, 0};
      if (!exited_) fds[i_pid = n++] = {s_.pidfd, POLLIN, 0};
      int timeout = killed_ ? -1 : RemainingMs(s_.deadline);
      int r = ::poll(fds, n, timeout);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        pipe_error = SysError("poll");
        KillGroup();
        break;
      }
      if (r == 0) {  // deadline
        timed_out = true;
        KillGroup();
        continue;
      }
      if (i_in >= 0 && fds[i_in].revents) WriteStdin();
      if (i_out >= 0 && fds[i_out].revents) ReadStdout();
      if (i_err >= 0 && fds[i_err].revents) ReadStderr();
      if (i_pid >= 0 && fds[i_pid].revents) exited_ = true;
    }
  }

  Output out;                       // stdout and stderr so far; exit_code is Run's to set
  bool timed_out = false;           // the deadline passed
  bool too_large = false;           // stdout outgrew max_output
  std::optional<Error> pipe_error;  // poll() failed

 private:
  void KillGroup() {
    if (!killed_) ::kill(-s_.pid, SIGKILL);
    killed_ = true;
  }

  // Writes the next piece of stdin; closes it when all is written or the child refuses it.
  void WriteStdin() {
    ssize_t w = WriteNoSigpipe(s_.in, stdin_data_.data() + written_,
                               std::min<size_t>(stdin_data_.size() - written_, 65536));
    if (w > 0) written_ += static_cast<size_t>(w);
    // EPIPE: the child stopped reading its input; its exit code tells the rest.
    if ((w < 0 && errno != EAGAIN) || written_ == stdin_data_.size()) CloseFd(s_.in);
  }

  // Appends what stdout has, or kills the child when that would pass max_output.
  void ReadStdout() {
    ssize_t got = ::read(s_.out, buf_, sizeof buf_);
    if (got > 0) {
      if (out.stdout_data.size() + static_cast<size_t>(got) > max_output_) {
        too_large = true;
        KillGroup();
        CloseFd(s_.out);
      } else {
        out.stdout_data.append(buf_, static_cast<size_t>(got));
      }
    } else if (got == 0 || errno != EINTR) {
      CloseFd(s_.out);
    }
  }

  // Appends what stderr has, keeping at most kMaxStderr bytes.
  void ReadStderr() {
    ssize_t got = ::read(s_.err, buf_, sizeof buf_);
    if (got > 0) {
      size_t room = kMaxStderr - std::min(kMaxStderr, out.stderr_data.size());
      out.stderr_data.append(buf_, std::min(room, static_cast<size_t>(got)));
    } else if (got == 0 || errno != EINTR) {
      CloseFd(s_.err);
    }
  }

  Spawned& s_;
  const std::string_view stdin_data_;
  const size_t max_output_;
  size_t written_ = 0;  // bytes of stdin_data_ written
  bool exited_ = false, killed_ = false;
  char buf_[65536];
};

Command::Command(std::string_view subcommand) {
  if (!subcommand.empty()) args_.emplace_back(subcommand);
}
Command::~Command() = default;

Command& Command::Arg(std::string_view literal) {
  args_.emplace_back(literal);
  return *this;
}

Command& Command::UserArg(std::string_view value) {
  if (refused_) return *this;
  if (value.empty() || value.front() == '-' || value.find('\0') != value.npos) {
    refused_ = "argument may not be empty, start with '-' or contain NUL";
  } else {
    args_.emplace_back(value);
  }
  return *this;
}

Command& Command::EndOfOptions() { return Arg("--end-of-options"); }

Command& Command::Dashes() {
  seen_dashes_ = true;
  return Arg("--");
}

Command& Command::PathArg(std::string_view path) {
  if (refused_) return *this;
  if (!seen_dashes_ || path.find('\0') != path.npos) {
    refused_ = "path argument must follow '--' and may not contain NUL";
  } else {
    args_.emplace_back(path);
  }
  return *this;
}

Command& Command::Env(std::string_view key, std::string_view value) {
  for (auto& [k, v] : env_) {
    if (k == key) {
      v = value;
      return *this;
    }
  }
  env_.emplace_back(std::string(key), std::string(value));
  return *this;
}
Command& Command::Dir(std::string path) {
  dir_ = std::move(path);
  return *this;
}
Command& Command::Timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  return *this;
}
Command& Command::MaxOutput(size_t bytes) {
  max_output_ = bytes;
  return *this;
}

Command& Command::DiesWithParent() {
  dies_with_parent_ = true;
  return *this;
}

std::string Command::ToString() const {
  std::string s = "git";
  for (const auto& a : args_) (s += ' ') += a;
  return s;
}

namespace {

// The supervisor's handler of its death signal: SIGKILL to its process group — git and
// every process git started (repack's pack-objects), itself included.
extern "C" void KillOwnProcessGroup(int) { ::kill(0, SIGKILL); }

// posix_spawn's setup (stdio from the pipes, the directory, an own process group, an empty
// signal mask, default dispositions) by fork + exec, with a supervisor between the caller
// and git: PR_SET_PDEATHSIG reaches only a direct child, and git's own children
// (pack-objects) must die with the caller too. The supervisor leads the process group,
// gets SIGTERM when the thread that started it ends (the process dies), kills the group
// then; otherwise it waits for git and exits as git did. Between fork and exec only
// async-signal-safe calls; the supervisor never execs, so it closes the fds it inherited
// (other requests' sockets and pipes must not stay open in it). Returns 0 or an errno
// value (a failed exec shows as exit 127).
int ForkWithDeathSignal(pid_t* pid, const std::string& path, int in, int out, int err,
                        const std::string& dir, char* const* argv, char* const* envp) {
  const pid_t parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) return errno;
  if (child == 0) {
    ::setpgid(0, 0);
    struct sigaction kill_group {};
    kill_group.sa_handler = KillOwnProcessGroup;
    sigemptyset(&kill_group.sa_mask);
    ::sigaction(SIGTERM, &kill_group, nullptr);
    for (int s : {SIGPIPE, SIGINT, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(s, SIG_DFL);
    sigset_t empty;
    sigemptyset(&empty);
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the caller died before the prctl
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) ::_exit(127);
    pid_t git = ::fork();
    if (git < 0) ::_exit(127);
    if (git == 0) {
      ::signal(SIGTERM, SIG_DFL);
      if (path.empty()) {
        ::execvpe("git", argv, envp);
      } else {
        ::execve(path.c_str(), argv, envp);
      }
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(git, &status, 0) < 0) {
      if (errno != EINTR) ::_exit(127);
    }
    if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
    // Killed: die of the same signal, so the caller reads git's end.
    ::signal(WTERMSIG(status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(status));
    ::_exit(128 + WTERMSIG(status));
  }
  // The group is set here too, not only in the child: a Kill() (SIGKILL to -pid) that
  // came before the child's own setpgid would find no group and kill nothing.
  ::setpgid(child, child);
  *pid = child;
  return 0;
}

}  // namespace

Result<Command::Spawned> Command::Spawn() {
  if (refused_) return MakeError(ErrorCode::BadRequest, *refused_);
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return SysError("pipe2");
  if (pipe2(out, O_CLOEXEC) != 0) {
    Error e = SysError("pipe2");
    ::close(in[0]), ::close(in[1]);
    return e;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    Error e = SysError("pipe2");
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return e;
  }
  auto close_all = [&] {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
  };

  std::vector<std::string> env = BuildEnv(env_);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string git = "git";
  std::vector<char*> argv{git.data()};
  for (auto& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  if (!dir_.empty()) posix_spawn_file_actions_addchdir_np(&fa, dir_.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group (killable as a whole), empty signal mask, default dispositions for
  // signals a server commonly ignores (an ignored SIGPIPE would be inherited across exec).
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  pid_t pid = -1;
  const std::string& path = GitBinary();
  int rc = 0;
  if (dies_with_parent_) {
    rc = ForkWithDeathSignal(&pid, path, in[0], out[1], err[1], dir_, argv.data(), envp.data());
  } else {
    rc = path.empty() ? posix_spawnp(&pid, "git", &fa, &attr, argv.data(), envp.data())
                      : posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    close_all();
    return MakeError(ErrorCode::Internal, "cannot start " + ToString() + ": " + std::strerror(rc));
  }
  ::close(in[0]), ::close(out[1]), ::close(err[1]);

  Spawned s;
  s.pid = pid;
  s.in = in[1];
  s.out = out[0];
  s.err = err[0];
  s.deadline = Clock::now() + timeout_;
  s.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (s.pidfd < 0) {
    Error e = SysError("pidfd_open");
    ::kill(-pid, SIGKILL);
    ::close(s.in), ::close(s.out), ::close(s.err);
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return e;
  }
  return s;
}

Result<Output> Command::Run(std::string_view stdin_data) {
  HANGAR_ASSIGN_OR_RETURN(auto spawned, Spawn());
  Spawned s = spawned;
  // One thread multiplexes stdin, stdout, stderr and the child's exit with poll().
  int flags = fcntl(s.in, F_GETFL);
  fcntl(s.in, F_SETFL, flags | O_NONBLOCK);
  if (stdin_data.empty()) CloseFd(s.in);

  RunLoop loop(s, stdin_data, max_output_);
  loop.Poll();
  CloseFd(s.in), CloseFd(s.out), CloseFd(s.err);
  int status = 0;
  while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(s.pidfd);
  loop.out.exit_code = ExitCodeOf(status);
  if (loop.pipe_error) return *loop.pipe_error;
  if (loop.timed_out)
    return MakeError(ErrorCode::Unavailable,
                     ToString() + " timed out after " + std::to_string(timeout_.count()) + " ms");
  if (loop.too_large)
    return MakeError(ErrorCode::PayloadTooLarge,
                     ToString() + " wrote more than " + std::to_string(max_output_) + " bytes");
  return std::move(loop.out);
}

Result<std::unique_ptr<Process>> Command::Start() {
  HANGAR_ASSIGN_OR_RETURN(auto spawned, Spawn());
  const Spawned& s = spawned;
  return std::unique_ptr<Process>(
      new Process(s.pid, s.pidfd, s.in, s.out, s.err, s.deadline, ToString()));
}

// ---------------------------------------------------------------------------------------
// Process

Process::Process(pid_t pid, int pidfd, int stdin_fd, int stdout_fd, int stderr_fd,
                 std::chrono::steady_clock::time_point deadline, std::string description)
    : pid_(pid),
      pidfd_(pidfd),
      stdin_fd_(stdin_fd),
      stdout_fd_(stdout_fd),
      stderr_fd_(stderr_fd),
      deadline_(deadline),
      description_(std::move(description)) {
  watcher_ = std::thread([this] { Watch(); });
}

Process::~Process() {
  if (!exit_code_) Kill();
  CloseStdin();
  {
    std::lock_guard lock(mu_);
    CloseFd(stdout_fd_);
  }
  if (watcher_.joinable()) watcher_.join();
  std::lock_guard lock(mu_);
  if (!reaped_) {
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  ::close(stderr_fd_);
  ::close(pidfd_);
}

void Process::Watch() {
  // Ends when stderr is at EOF and the child has exited; kills the group at the deadline.
  bool err_open = true, exited = false, killed = false;
  char buf[4096];
  while (err_open || !exited) {
    pollfd fds[2];
    int n = 0, i_err = -1, i_pid = -1;
    if (err_open) fds[i_err = n++] = {stderr_fd_, POLLIN, 0};
    if (!exited) fds[i_pid = n++] = {pidfd_, POLLIN, 0};
    int r = ::poll(fds, n, killed ? -1 : RemainingMs(deadline_));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 || r < 0) {
      timed_out_ = (r == 0);
      Kill();
      killed = true;
      if (r < 0) return;
      continue;
    }
    if (i_err >= 0 && fds[i_err].revents) {
      ssize_t got = ::read(stderr_fd_, buf, sizeof buf);
      if (got > 0) {
        std::lock_guard lock(mu_);
        size_t room = Command::kMaxStderr - std::min(Command::kMaxStderr, stderr_.size());
        stderr_.append(buf, std::min(room, static_cast<size_t>(got)));
      } else if (got == 0 || errno != EINTR) {
        err_open = false;
      }
    }
    if (i_pid >= 0 && fds[i_pid].revents) exited = true;
  }
}

Result<void> Process::WriteStdin(std::span<const char> data) {
  if (stdin_fd_ < 0) return MakeError(ErrorCode::Internal, description_ + ": stdin is closed");
  while (!data.empty()) {
    ssize_t w = WriteNoSigpipe(stdin_fd_, data.data(), data.size());
    if (w < 0) {
      if (timed_out_) return MakeError(ErrorCode::Unavailable, description_ + " timed out");
      return SysError(description_ + ": writing stdin");
    }
    data = data.subspan(static_cast<size_t>(w));
  }
  return {};
}

void Process::CloseStdin() {
  std::lock_guard lock(mu_);
  CloseFd(stdin_fd_);
}

Result<size_t> Process::ReadStdout(std::span<char> buf) {
  if (stdout_fd_ < 0) return size_t{0};
  for (;;) {
    ssize_t got = ::read(stdout_fd_, buf.data(), buf.size());
    if (got > 0) return static_cast<size_t>(got);
    if (got < 0 && errno == EINTR) continue;
    if (timed_out_) return MakeError(ErrorCode::Unavailable, description_ + " timed out");
    if (got < 0) return SysError(description_ + ": reading stdout");
    return size_t{0};
  }
}

Result<int> Process::Wait() {
  if (!exit_code_) {
    CloseStdin();
    {
      std::lock_guard lock(mu_);
      CloseFd(stdout_fd_);  // a child still writing gets EPIPE instead of blocking
    }
    if (watcher_.joinable()) watcher_.join();
    std::lock_guard lock(mu_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    exit_code_ = ExitCodeOf(status);
  }
  if (timed_out_) return MakeError(ErrorCode::Unavailable, description_ + " timed out");
  return *exit_code_;
}

void Process::Kill() {
  std::lock_guard lock(mu_);
  // Only before reaping: until then the pid (= pgid) cannot be reused.
  if (!reaped_) ::kill(-pid_, SIGKILL);
}

std::string Process::Stderr() const {
  std::lock_guard lock(mu_);
  return stderr_;
}

// ---------------------------------------------------------------------------------------
// ProcessSource

ProcessSource::ProcessSource(std::unique_ptr<Process> process) : process_(std::move(process)) {}

Result<size_t> ProcessSource::Read(std::span<char> buf) {
  if (done_) return size_t{0};
  auto n = process_->ReadStdout(buf);
  if (!n) return n;
  if (*n > 0) return n;
  done_ = true;
  HANGAR_ASSIGN_OR_RETURN(auto code, process_->Wait());
  if (code != 0)
    return MakeError(ErrorCode::Internal,
                     "git exited with status " + std::to_string(code) + ": " + process_->Stderr());
  return size_t{0};
}

}  // namespace hangar::git

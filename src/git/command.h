#pragma once
// Command: runs the `git` binary as a subprocess, the way Gitea's git runner does
// (STYLE.md §5): literal arguments through Arg(), request-derived data only through
// UserArg()/PathArg(), a clean environment (LC_ALL=C, GIT_TERMINAL_PROMPT=0, no inherited
// GIT_*), a working directory, and a timeout on every run. The child runs in its own
// process group, which is sent SIGKILL on timeout or when the run is abandoned.
//
// Two ways to run:
//   * Run(): collect stdout/stderr (bounded) and the exit status. For small outputs.
//   * Start(): a streaming Process, whose stdin and stdout may be driven from two threads
//     at once (git-lfs.md §4.3: upload-pack/receive-pack --stateless-rpc).

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"

namespace hangar::git {

// What a finished Run() produced.
struct Output {
  int exit_code = -1;       // 0..255, or 128 + signal number when killed by a signal
  std::string stdout_data;  // at most Command::MaxOutput() bytes
  std::string stderr_data;  // at most Command::kMaxStderr bytes (excess dropped)
  bool ok() const { return exit_code == 0; }
};

class Process;

// Builder for one git invocation. Not thread-safe; use once (Run() or Start()).
class Command {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{60'000};
  static constexpr size_t kDefaultMaxOutput = 64 << 20;  // bytes
  static constexpr size_t kMaxStderr = 64 << 10;         // bytes kept for logging

  // `git` followed by the given subcommand words, e.g. Command("log").
  explicit Command(std::string_view subcommand = {});
  ~Command();

  // A literal argument written by us (option or subcommand). Never request data.
  Command& Arg(std::string_view literal);
  // Request-derived data as one argument. Refused (Run/Start then return BadRequest)
  // when it is empty, starts with '-' or contains NUL, so it can never become an option.
  // Put EndOfOptions() before it where the subcommand supports `--end-of-options`.
  Command& UserArg(std::string_view value);
  // Adds `--end-of-options` (git >= 2.24): everything after it is positional.
  Command& EndOfOptions();
  // Adds `--`: the pathspec separator. PathArg() may only follow it.
  Command& Dashes();
  // A request-derived path after Dashes(); may start with '-' (git cannot take it as an
  // option there). Refused (BadRequest) when it contains NUL or Dashes() was not given.
  Command& PathArg(std::string_view path);
  // An extra environment variable for the child (overrides the defaults, and an earlier
  // Env() of the same key).
  Command& Env(std::string_view key, std::string_view value);
  // Working directory of the child; default: the server's.
  Command& Dir(std::string path);
  // Wall-clock limit of the whole run, from Run()/Start() to exit.
  Command& Timeout(std::chrono::milliseconds timeout);
  // Limit on collected stdout for Run(); beyond it the child is killed and Run() fails.
  Command& MaxOutput(size_t bytes);
  // The child and every process it starts are killed (SIGKILL) when the thread that
  // started it ends, the process included: a long job's git (a repack and its
  // pack-objects) must not outlive a worker killed with -9 and race the worker that takes
  // the job up. Costs two forks (a supervisor, then git) instead of a posix_spawn, so it
  // is for long commands, not per-request ones.
  Command& DiesWithParent();

  // Runs to completion, writing `stdin_data` to the child's stdin (then closing it) while
  // collecting stdout and stderr. A non-zero exit is not an error: see Output::exit_code.
  // Errors: BadRequest (refused UserArg), Unavailable (timeout), PayloadTooLarge (stdout
  // over MaxOutput), Internal (spawn or pipe failure).
  Result<Output> Run(std::string_view stdin_data = {});

  // Starts the child and returns it for streaming. Errors: BadRequest, Internal.
  Result<std::unique_ptr<Process>> Start();

  // "git log --format=%H ..." for log lines.
  std::string ToString() const;

 private:
  struct Spawned;
  class RunLoop;  // Run's poll() loop over the child's pipes and exit (command.cc)
  Result<Spawned> Spawn();

  std::vector<std::string> args_;  // argv without the leading "git"
  std::vector<std::pair<std::string, std::string>> env_;
  std::string dir_;
  std::chrono::milliseconds timeout_ = kDefaultTimeout;
  size_t max_output_ = kDefaultMaxOutput;
  bool dies_with_parent_ = false;
  std::optional<std::string> refused_;  // first refused UserArg/PathArg, as a message
  bool seen_dashes_ = false;
};

// A running git child started by Command::Start(). Owns the child: destroying it before
// Wait() returned kills the process group and reaps the child.
//
// Thread-safety: WriteStdin()/CloseStdin() may run on one thread while ReadStdout() runs
// on another; Wait() after both are done. Stderr is drained by a background thread (which
// also enforces the timeout), bounded to Command::kMaxStderr bytes.
class Process {
 public:
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Writes all of `data` to the child's stdin, blocking while the pipe is full.
  // Errors: Internal when the child closed its stdin (EPIPE; SIGPIPE is never raised) or
  // the pipe failed; Unavailable after the timeout killed the child.
  Result<void> WriteStdin(std::span<const char> data);
  // Closes the child's stdin (EOF for the child). Idempotent.
  void CloseStdin();
  // Reads up to buf.size() bytes of stdout; 0 = end of output. Errors: Unavailable when
  // the output ended because the timeout killed the child, Internal on pipe failure.
  Result<size_t> ReadStdout(std::span<char> buf);
  // Closes stdin and stdout (if still open), waits for the child to exit and returns its
  // exit code (0..255, or 128 + signal). Errors: Unavailable when the timeout killed it.
  Result<int> Wait();
  // Kills the process group now (SIGKILL). Safe from any thread, before or during Wait().
  void Kill();
  // Stderr collected so far (complete after Wait()), at most Command::kMaxStderr bytes.
  std::string Stderr() const;
  // The child's pid (also its process group id).
  pid_t pid() const { return pid_; }

 private:
  friend class Command;
  Process(pid_t pid, int pidfd, int stdin_fd, int stdout_fd, int stderr_fd,
          std::chrono::steady_clock::time_point deadline, std::string description);
  void Watch();  // background thread: drains stderr, enforces the deadline

  const pid_t pid_;
  const int pidfd_;
  int stdin_fd_;
  int stdout_fd_;
  const int stderr_fd_;
  const std::chrono::steady_clock::time_point deadline_;
  const std::string description_;
  mutable std::mutex mu_;  // guards stderr_, reaped_, stdin_fd_/stdout_fd_ closing
  std::string stderr_;
  bool reaped_ = false;
  std::optional<int> exit_code_;
  std::atomic<bool> timed_out_{false};
  std::thread watcher_;
};

// A ByteSource over a Process's stdout. At the end of the output it waits for the child
// and turns a non-zero exit into an Internal error carrying the child's stderr, so a
// truncated stream is never mistaken for a complete one.
class ProcessSource final : public ByteSource {
 public:
  explicit ProcessSource(std::unique_ptr<Process> process);
  Result<size_t> Read(std::span<char> buf) override;
  Process& process() { return *process_; }

 private:
  std::unique_ptr<Process> process_;
  bool done_ = false;
};

}  // namespace hangar::git

#pragma once
// GitService: the rules behind git smart HTTP (git-lfs.md §1–10, hf-api.md §10.1) — who may
// fetch or push, how many git processes may run at once, and how `git upload-pack` /
// `git receive-pack --stateless-rpc` are spawned and streamed. No HTTP types: the handlers
// in api/git/ parse requests and render what this returns.

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/byte_source.h"
#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "git/command.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// The two smart-HTTP services (git-lfs.md §3.4).
enum class GitRpc { UploadPack, ReceivePack };

// "git-upload-pack" / "git-receive-pack": the `service=` value and media-type infix.
std::string_view GitRpcName(GitRpc rpc);

// Parses a `service=` query value. Errors: Forbidden "unsupported service '<s>'" for
// anything but git-upload-pack / git-receive-pack, as git http-backend does (§3.2, §5).
Result<GitRpc> ParseGitRpc(std::string_view service);

// The Git-Protocol request header as it may reach GIT_PROTOCOL: unchanged when it matches
// ^[A-Za-z0-9=:._-]{0,256}$, else "" (git then falls back to v0; §3.3).
std::string SanitizeGitProtocol(std::string_view header);

// The protocol version a Git-Protocol value asks for: the highest `version=N` item of the
// ':'-separated list, 0 when there is none (git's own rule, §3.3).
int GitProtocolVersion(std::string_view git_protocol);

// The [limits] numbers plus process timeouts. The configured numbers have no defaults
// here: config.h (LimitsConfig) is their one source and cli's GitLimitsFrom copies them;
// left at zero, nothing is admitted.
struct GitLimits {
  int pack_concurrency = 0;                      // upload-pack processes running at once
  int pack_per_principal = 0;                    // of which one user (or client address) may hold
  int pack_queue = 0;                            // callers waiting for a slot (fetches and pushes)
  std::chrono::milliseconds pack_queue_wait{0};  // longest wait in that queue
  int push_concurrency = 0;                      // receive-pack processes per principal key
  // Wall-clock limit of one RPC process, from spawn to exit (big packs take long).
  std::chrono::milliseconds rpc_timeout{std::chrono::hours(6)};
  // Limit of one `--advertise-refs` run.
  std::chrono::milliseconds advertise_timeout{std::chrono::minutes(2)};
  // Request bytes read before waiting for a slot and starting git. A body that fits
  // (fetch negotiations, small pushes, git's probe) is consumed by the handler, which
  // keeps the connection reusable; larger bodies stream on. Held per RPC until git has
  // it, so at most (worker threads + pack_queue) × this at once.
  size_t request_prebuffer = 256 << 10;
};

class GitAdmission;

// One admitted git RPC. Movable RAII handle: releases its slot (waking a waiter) when
// destroyed or on Release(). Must not outlive its GitAdmission.
class GitSlot {
 public:
  GitSlot() = default;
  GitSlot(GitSlot&& other) noexcept { *this = std::move(other); }
  GitSlot& operator=(GitSlot&& other) noexcept;
  GitSlot(const GitSlot&) = delete;
  GitSlot& operator=(const GitSlot&) = delete;
  ~GitSlot() { Release(); }

  // Gives the slot back. Idempotent.
  void Release();
  // True while the slot is held.
  explicit operator bool() const { return owner_ != nullptr; }

 private:
  friend class GitAdmission;
  GitSlot(GitAdmission* owner, GitRpc rpc, std::string key)
      : owner_(owner), rpc_(rpc), key_(std::move(key)) {}

  GitAdmission* owner_ = nullptr;
  GitRpc rpc_ = GitRpc::UploadPack;
  std::string key_;
};

// Called while a caller waits for a slot, with how many callers are ahead of it in the
// queue: once when it starts waiting, then each time that number changes (not under the
// admission's lock). Transports that can talk to a waiting client (SSH's stderr) tell it
// why it waits.
using GitWaitNotice = std::function<void(int ahead)>;

// Admission control for git processes, one budget for every transport (HTTP, SSH,
// git://; issue 18 §3): at most pack_concurrency upload-packs overall, pack_per_principal
// of them per principal key, and the anonymous class (keys "anon:<address>") together at
// most max(1, pack_concurrency − 1), so signed-in users always find a slot; at most
// push_concurrency receive-packs per principal key; and a queue of at most pack_queue
// waiters, each waiting at most pack_queue_wait.
//
// Principal keys: "user:<id>", "deploy:<key id>", "anon:<client address>" (GitPrincipalKey).
// Order is FIFO-ish: a slot goes to the earliest waiter that can use it, so a principal at
// its own bound does not hold up others queued behind it. Thread-safe; Acquire blocks.
class GitAdmission {
 public:
  // Running and waiting counts, for metrics and tests.
  struct Stats {
    int fetches = 0;  // upload-packs admitted
    int pushes = 0;   // receive-packs admitted
    int queued = 0;   // callers waiting
  };

  // `on_queued`, if set, is called (under the internal lock: it must not call back) each
  // time a caller starts waiting, with the queue length; tests synchronise on it.
  explicit GitAdmission(GitLimits limits, std::function<void(int queued)> on_queued = {});
  GitAdmission(const GitAdmission&) = delete;
  GitAdmission& operator=(const GitAdmission&) = delete;

  // A slot for `rpc` on behalf of `principal_key`, waiting up to pack_queue_wait and
  // telling `on_wait` (if set) where it stands meanwhile. Errors: Unavailable "too many git
  // operations in progress; retry later" when the queue is full or the wait ran out
  // (HTTP renders it as 503 + Retry-After, SSH and git:// as an ERR packet).
  Result<GitSlot> Acquire(GitRpc rpc, std::string principal_key, const GitWaitNotice& on_wait = {});

  Stats Snapshot() const;

 private:
  friend class GitSlot;
  struct Waiter {
    GitRpc rpc;
    const std::string* key;
  };
  bool Fits(const Waiter& w) const;                        // needs mu_
  bool MayGo(std::list<Waiter>::const_iterator me) const;  // needs mu_
  int Ahead(std::list<Waiter>::const_iterator me) const;   // needs mu_
  void Take(GitRpc rpc, const std::string& key);           // needs mu_
  void Release(GitRpc rpc, const std::string& key);

  const GitLimits limits_;
  const std::function<void(int)> on_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int fetches_ = 0;
  int anonymous_fetches_ = 0;
  int pushes_ = 0;
  std::unordered_map<std::string, int> fetches_by_key_;
  std::unordered_map<std::string, int> pushes_by_key_;
  std::list<Waiter> queue_;  // arrival order
};

// The admission key of `who` (GitAdmission): "deploy:<id>" for a deploy key,
// "user:<id>" for a user, else "anon:<client_address>".
std::string GitPrincipalKey(const Principal& who, std::string_view client_address);

// How GitService reaches repositories: RepoService in production, fakes in tests.
struct GitRepoAccess {
  // As RepoService::Open.
  std::function<Result<RepoHandle>(const Principal&, const RepoId&, Access)> open;
  // As RepoService::AfterPush.
  std::function<void(const RepoHandle&)> after_push;
};

// A ref/capability advertisement, ready to send (git-lfs.md §3.2/§3.3).
struct GitAdvertisement {
  std::string body;  // "# service=" preamble (not for upload-pack v2) + git's output
};

// The parts of a POST git-upload-pack / git-receive-pack request the service needs.
struct GitRpcRequest {
  // The request body, already decoded (the handler undoes Content-Encoding: gzip).
  // Read on a thread of the service's own while the response streams.
  std::shared_ptr<ByteSource> body;
  std::string git_protocol;    // the raw Git-Protocol header ("" when absent)
  std::string client_address;  // peer IP: the principal key of anonymous callers
};

// Thread-safe; one per process. Calls block (repo lookup, git, waiting for a slot).
// One admitted git process serving a full-duplex transport (SSH through `hangar serv`,
// git://): `git upload-pack` / `git receive-pack` without --stateless-rpc, whose stdin and
// stdout the transport pumps. Holds the admission slot until Finish() or destruction;
// destroying it unfinished kills git.
class GitConnection {
 public:
  GitConnection(GitRpc rpc, RepoHandle repo, GitSlot slot, std::unique_ptr<git::Process> process,
                std::function<void(const RepoHandle&)> after_push);
  ~GitConnection();
  GitConnection(const GitConnection&) = delete;
  GitConnection& operator=(const GitConnection&) = delete;

  // git's stdin and stdout (Process's threading rules hold).
  git::Process& process() { return *process_; }
  // After the transport has stopped pumping: waits for git and, for a receive-pack that
  // exited 0, brings the repo's metadata up to date (RepoService::AfterPush) before
  // returning, so the pusher's next API call sees the push. Returns git's exit status.
  // Errors: Unavailable (git outlived rpc_timeout), Internal.
  Result<int> Finish();

 private:
  const GitRpc rpc_;
  const RepoHandle repo_;
  GitSlot slot_;
  std::unique_ptr<git::Process> process_;
  std::function<void(const RepoHandle&)> after_push_;
  bool finished_ = false;
};

class GitService {
 public:
  GitService(RepoService& repos, GitLimits limits, std::shared_ptr<spdlog::logger> log = nullptr)
      : GitService(GitRepoAccess{[&repos](const Principal& who, const RepoId& id, Access needed) {
                                   return repos.Open(who, id, needed);
                                 },
                                 [&repos](const RepoHandle& h) { repos.AfterPush(h); }},
                   limits, std::move(log)) {}
  // `log` defaults to Log("git").
  GitService(GitRepoAccess repos, GitLimits limits, std::shared_ptr<spdlog::logger> log = nullptr);
  ~GitService();

  // GET info/refs?service=<rpc>: runs `git <rpc> --stateless-rpc --advertise-refs .` with
  // GIT_PROTOCOL from `git_protocol` (sanitized) and prefixes `# service=git-<rpc>` + flush,
  // except for upload-pack speaking v2 (http-backend's shape, git-lfs.md §3.2–3.4).
  // Does not take a pack slot: it is short and runs inside the handler, so the worker
  // pool already bounds how many run at once.
  // Access: upload-pack needs Read, receive-pack Write (§7).
  // Errors: Unauthorized for anonymous callers who need more (also when the repo is
  // private or missing, so git asks for credentials; §6), RepoNotFound for signed-in
  // callers who cannot read it, Forbidden for signed-in callers who cannot write,
  // Unavailable (timeout), Internal (git failed).
  Result<GitAdvertisement> InfoRefs(const Principal& who, const RepoId& id, GitRpc rpc,
                                    std::string_view git_protocol);

  // POST git-<rpc>: checks access as InfoRefs, waits for a slot (GitAdmission), spawns
  // `git <rpc> --stateless-rpc .` and returns its stdout as a stream (git-lfs.md §4).
  // The request body is copied into git's stdin by a thread of its own while the caller
  // reads the stream, so neither side can block the other (§4.3). The returned source
  // holds the slot; at the end of a receive-pack that exited 0 it runs
  // RepoService::AfterPush before reporting the end, so the API shows the push once the
  // client has the response (hf-api.md §10.1). Destroying it early kills git.
  // git's own failures travel in-band (ERR / side-band 3): a non-zero exit is logged and
  // the stream ends normally. Stream Read errors: BadRequest (request body cut short —
  // git is killed first, so a truncated push changes nothing), Unavailable (timeout).
  // Errors: as InfoRefs; Unavailable (no slot); BadRequest (reading the body failed);
  // Internal (spawn failed).
  Result<std::unique_ptr<ByteSource>> Rpc(const Principal& who, const RepoId& id, GitRpc rpc,
                                          GitRpcRequest request);

  // A full-duplex session (SSH, git://): checks access as InfoRefs, waits for a slot under
  // `principal_key` (telling `on_wait`), and starts `git <rpc> .` with GIT_PROTOCOL from
  // `git_protocol` (sanitized). Errors: as InfoRefs; Unavailable (no slot); Internal.
  Result<std::unique_ptr<GitConnection>> Connect(const Principal& who, const RepoId& id, GitRpc rpc,
                                                 std::string_view git_protocol,
                                                 std::string principal_key,
                                                 const GitWaitNotice& on_wait = {});

  // git-lfs-authenticate over SSH (git-lfs.md §11.1): a repo credential
  // (services/auth/repo_credential.h) for `who` on `id`, signed with `key`, valid `ttl`.
  // Access: Read for a download, Write for an upload; the credential may push only then.
  // Errors: as InfoRefs.
  Result<std::string> LfsCredential(const Principal& who, const RepoId& id, bool upload,
                                    std::string_view key, std::chrono::seconds ttl);

  GitAdmission& admission() { return admission_; }

 private:
  Result<RepoHandle> OpenFor(const Principal& who, const RepoId& id, GitRpc rpc);

  GitRepoAccess repos_;
  GitLimits limits_;
  std::shared_ptr<spdlog::logger> log_;
  GitAdmission admission_;
};

}  // namespace hangar::services

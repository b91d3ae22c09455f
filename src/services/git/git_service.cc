#include "services/git/git_service.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/util.h"
#include "git/command.h"
#include "git/pkt_line.h"
#include "services/auth/repo_credential.h"

namespace hangar::services {

namespace {

constexpr std::string_view kBusy = "too many git operations in progress; retry later";
constexpr size_t kPipeChunk = 64 << 10;
// How long the end of a response waits for the request body after git finished.
constexpr std::chrono::seconds kFeederGrace{30};
// A ref advertisement of a repo with ~1M refs still fits.
constexpr size_t kMaxAdvertisement = 128 << 20;

// Fsck checks of author/committer lines that old but harmless histories fail; lowered to
// warnings so such repos can be pushed. Checks that protect clients (.gitmodules, .git
// paths, malformed trees) keep failing the push.
constexpr std::string_view kLenientFsck[] = {"badDate",
                                             "badDateOverflow",
                                             "badEmail",
                                             "badTimezone",
                                             "missingEmail",
                                             "missingNameBeforeEmail",
                                             "missingSpaceBeforeDate",
                                             "missingSpaceBeforeEmail",
                                             "zeroPaddedDate",
                                             "zeroPaddedFilemode"};

// `git -c ... <rpc>` (callers add --stateless-rpc, --advertise-refs, the path) with the server's
// settings injected per process (git-lfs.md §4.3, §9, §10), never written into the repositories.
git::Command BaseCommand(GitRpc rpc, const std::string& git_path, const std::string& git_protocol) {
  git::Command cmd;
  if (rpc == GitRpc::UploadPack) {
    // Partial clones, and v0 clients backfilling objects by id (§9).
    cmd.Arg("-c").Arg("uploadpack.allowFilter=true");
    cmd.Arg("-c").Arg("uploadpack.allowAnySHA1InWant=true");
    cmd.Arg("upload-pack");
  } else {
    cmd.Arg("-c").Arg("receive.fsckObjects=true");
    for (std::string_view id : kLenientFsck) {
      cmd.Arg("-c").Arg("receive.fsck." + std::string(id) + "=warn");
    }
    // refs/convert/* belong to the server (dataset-viewer.md): git refuses updates of
    // hidden refs ("deny updating a hidden ref").
    cmd.Arg("-c").Arg("receive.hideRefs=refs/convert");
    cmd.Arg("-c").Arg("receive.shallowUpdate=false");
    cmd.Arg("receive-pack");
  }
  cmd.Dir(git_path);
  if (!git_protocol.empty()) cmd.Env("GIT_PROTOCOL", git_protocol);
  return cmd;
}

// Reflog entries name the pusher, as with http-backend's REMOTE_USER (git-lfs.md §4.3);
// hooks (none yet) would find the user and repo here (§10).
void SetPusher(git::Command& cmd, const Principal& who, const RepoId& id) {
  cmd.Env("GIT_COMMITTER_NAME", who.name);
  cmd.Env("GIT_COMMITTER_EMAIL", who.name + "@users.noreply.hangar");
  cmd.Env("HANGAR_USER_ID", std::to_string(who.user_id));
  cmd.Env("HANGAR_REPO", id.UrlPath());
}

// What the body-feeding thread and the response stream share.
struct FeedState {
  std::shared_ptr<git::Process> process;
  std::shared_ptr<ByteSource> body;
  std::string prefix;  // request bytes read before git started
  bool prefix_is_all = false;
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;           // guarded by mu
  std::optional<Error> error;  // guarded by mu: the request body failed
};

// Copies the request into git's stdin, then closes it. A body that fails (client gone,
// corrupt gzip) kills git instead, so git never acts on a truncated request. git closing
// its stdin early (EPIPE) just ends the copy: git's output says what happened.
void Feed(const std::shared_ptr<FeedState>& s) {
  std::optional<Error> failure;
  bool stdin_ok = true;
  if (!s->prefix.empty()) {
    stdin_ok = s->process->WriteStdin(s->prefix).has_value();
    std::string().swap(s->prefix);
  }
  if (stdin_ok && !s->prefix_is_all) {
    std::vector<char> buf(kPipeChunk);
    while (!s->cancelled) {
      auto n = s->body->Read(buf);
      if (!n) {
        failure = std::move(n).error();
        s->process->Kill();
        break;
      }
      if (*n == 0 || s->cancelled) break;
      if (!s->process->WriteStdin(std::span<const char>(buf.data(), *n))) break;
    }
  }
  if (!failure) s->process->CloseStdin();
  std::lock_guard lock(s->mu);
  s->done = true;
  s->error = std::move(failure);
  s->cv.notify_all();
}

// git's stdout as the response body. Owns the slot, the process (shared with the feeder)
// and the feeder thread.
class RpcSource final : public ByteSource {
 public:
  RpcSource(GitRpc rpc, RepoHandle repo, GitSlot slot, std::shared_ptr<FeedState> state,
            std::function<void(const RepoHandle&)> after_push, bool changes_refs,
            std::shared_ptr<spdlog::logger> log)
      : rpc_(rpc),
        repo_(std::move(repo)),
        slot_(std::move(slot)),
        state_(std::move(state)),
        process_(state_->process),
        after_push_(std::move(after_push)),
        changes_refs_(changes_refs),
        log_(std::move(log)) {}

  // Called once, right after construction. Errors: Internal (no thread).
  Result<void> StartFeeder() {
    try {
      feeder_ = std::thread([s = state_] { Feed(s); });
    } catch (const std::system_error& e) {
      return MakeError(ErrorCode::Internal, std::string("cannot start feeder thread: ") + e.what());
    }
    return {};
  }

  ~RpcSource() override {
    // Runs on the connection's I/O thread when the response is abandoned: never block on
    // the feeder there (it may be waiting for that very connection). Killing git makes it
    // stop writing stdin; a feeder still reading the socket ends when the connection
    // closes and then drops the last reference to the process.
    if (!finished_) {
      state_->cancelled = true;
      process_->Kill();
      log_->info("{} of {} abandoned before its end; git killed", GitRpcName(rpc_),
                 repo_.record.Id().UrlPath());
    }
    if (feeder_.joinable()) {
      bool done;
      {
        std::lock_guard lock(state_->mu);
        done = state_->done;
      }
      if (done) {
        feeder_.join();
      } else {
        feeder_.detach();
      }
    }
  }

  Result<size_t> Read(std::span<char> buf) override {
    if (finished_) return size_t{0};
    auto n = process_->ReadStdout(buf);
    if (n && *n > 0) return n;
    return Finish(n ? std::nullopt : std::optional<Error>(std::move(n).error()));
  }

 private:
  // End of git's output: wait for the feeder and git, then (receive-pack) bring the
  // metadata up to date before the client sees the end of the response.
  Result<size_t> Finish(std::optional<Error> read_error) {
    finished_ = true;
    const std::string id = repo_.record.Id().UrlPath();
    if (read_error) process_->Kill();
    std::optional<Error> feed_error;
    bool feeder_done;
    {
      // The feeder is done, or about to be, unless it waits for body bytes: git has exited
      // or closed its output, so its next write fails at once.
      std::unique_lock lock(state_->mu);
      feeder_done = state_->cv.wait_for(lock, kFeederGrace, [&] { return state_->done; });
      feed_error = state_->error;
    }
    if (!feeder_done) {
      // A client that stopped sending; its thread ends with the connection.
      state_->cancelled = true;
      process_->Kill();
      feeder_.detach();
      slot_.Release();
      log_->warn("{} of {}: request body stalled after git finished", GitRpcName(rpc_), id);
      return MakeError(ErrorCode::BadRequest, "request body stalled");
    }
    feeder_.join();
    auto code = process_->Wait();  // only now: Wait closes stdin, which the feeder used
    if (feed_error) {
      log_->info("{} of {}: request body failed, git killed: {}", GitRpcName(rpc_), id,
                 feed_error->message);
      slot_.Release();
      return *feed_error;
    }
    if (read_error || !code) {
      Error e = read_error ? *read_error : code.error();
      log_->warn("{} of {} failed: {}", GitRpcName(rpc_), id, e.message);
      slot_.Release();
      return e;
    }
    if (*code != 0) {
      log_->warn("{} of {} exited with status {}: {}", GitRpcName(rpc_), id, *code,
                 process_->Stderr());
    }
    // The push slot is held through AfterPush: it bounds concurrent commit-graph writes.
    if (rpc_ == GitRpc::ReceivePack && *code == 0 && changes_refs_) after_push_(repo_);
    slot_.Release();
    return size_t{0};
  }

  const GitRpc rpc_;
  const RepoHandle repo_;
  GitSlot slot_;
  std::shared_ptr<FeedState> state_;
  std::shared_ptr<git::Process> process_;
  std::function<void(const RepoHandle&)> after_push_;
  const bool changes_refs_;
  std::shared_ptr<spdlog::logger> log_;
  std::thread feeder_;
  bool finished_ = false;
};

// Reads up to `max` bytes of `body`; `*all` tells whether that was the whole body.
Result<std::string> Prebuffer(ByteSource& body, size_t max, bool* all) {
  std::string out;
  out.resize(std::min<size_t>(max, 64 << 10));
  size_t have = 0;
  *all = false;
  while (have < max) {
    if (have == out.size()) out.resize(std::min(max, out.size() * 2));
    HANGAR_ASSIGN_OR_RETURN(auto n,
                            body.Read(std::span<char>(out.data() + have, out.size() - have)));
    if (n == 0) {
      *all = true;
      break;
    }
    have += n;
  }
  out.resize(have);
  return out;
}

// Whether a receive-pack request carries ref updates: git's probe request (`0000`, sent
// before a chunked push, git-lfs.md §4.1) and empty pushes do not.
bool HasCommands(std::string_view prefix) {
  git::PktReader reader(prefix);
  auto first = reader.Next();
  if (!first) return true;  // not parseable here; let git judge, assume it may change refs
  return *first && (*first)->type == git::PktType::Data;
}

}  // namespace

std::string_view GitRpcName(GitRpc rpc) {
  return rpc == GitRpc::UploadPack ? "git-upload-pack" : "git-receive-pack";
}

Result<GitRpc> ParseGitRpc(std::string_view service) {
  if (service == "git-upload-pack") return GitRpc::UploadPack;
  if (service == "git-receive-pack") return GitRpc::ReceivePack;
  std::string shown(service.substr(0, 64));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return MakeError(ErrorCode::Forbidden, "unsupported service '" + shown + "'");
}

std::string SanitizeGitProtocol(std::string_view header) {
  if (header.size() > 256) return "";
  for (char c : header) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '=' || c == ':' || c == '.' || c == '_' || c == '-';
    if (!ok) return "";
  }
  return std::string(header);
}

int GitProtocolVersion(std::string_view git_protocol) {
  int best = 0;
  while (!git_protocol.empty()) {
    size_t colon = git_protocol.find(':');
    std::string_view item = git_protocol.substr(0, colon);
    git_protocol =
        colon == std::string_view::npos ? std::string_view() : git_protocol.substr(colon + 1);
    constexpr std::string_view kKey = "version=";
    if (item.substr(0, kKey.size()) != kKey || item.size() == kKey.size() || item.size() > 12)
      continue;
    int v = 0;
    bool digits = true;
    for (char c : item.substr(kKey.size())) {
      if (c < '0' || c > '9') digits = false;
      v = v * 10 + (c - '0');
    }
    if (digits && v > best) best = v;
  }
  return best;
}

// ---------------------------------------------------------------------------------------
// GitSlot, GitAdmission

GitSlot& GitSlot::operator=(GitSlot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    rpc_ = other.rpc_;
    key_ = std::move(other.key_);
  }
  return *this;
}

void GitSlot::Release() {
  if (owner_) std::exchange(owner_, nullptr)->Release(rpc_, key_);
}

std::string GitPrincipalKey(const Principal& who, std::string_view client_address) {
  if (who.deploy_key_id != 0) return "deploy:" + std::to_string(who.deploy_key_id);
  if (!who.anonymous) return "user:" + std::to_string(who.user_id);
  return "anon:" + std::string(client_address);
}

namespace {
bool IsAnonymousKey(const std::string& key) { return key.rfind("anon:", 0) == 0; }
}  // namespace

GitAdmission::GitAdmission(GitLimits limits, std::function<void(int)> on_queued)
    : limits_(std::move(limits)), on_queued_(std::move(on_queued)) {}

bool GitAdmission::Fits(const Waiter& w) const {
  if (w.rpc == GitRpc::ReceivePack) {
    auto it = pushes_by_key_.find(*w.key);
    return it == pushes_by_key_.end() || it->second < limits_.push_concurrency;
  }
  if (fetches_ >= limits_.pack_concurrency) return false;
  // Anonymous clones together leave one slot to signed-in users.
  if (IsAnonymousKey(*w.key) && anonymous_fetches_ >= std::max(1, limits_.pack_concurrency - 1)) {
    return false;
  }
  auto it = fetches_by_key_.find(*w.key);
  return it == fetches_by_key_.end() || it->second < limits_.pack_per_principal;
}

bool GitAdmission::MayGo(std::list<Waiter>::const_iterator me) const {
  if (!Fits(*me)) return false;
  // FIFO among those who can use a slot now: an earlier waiter that fits goes first.
  for (auto it = queue_.begin(); it != me; ++it) {
    if (it->rpc == me->rpc && Fits(*it)) return false;
  }
  return true;
}

int GitAdmission::Ahead(std::list<Waiter>::const_iterator me) const {
  int ahead = 0;
  for (auto it = queue_.begin(); it != me; ++it) ++ahead;
  return ahead;
}

void GitAdmission::Take(GitRpc rpc, const std::string& key) {
  if (rpc == GitRpc::ReceivePack) {
    ++pushes_;
    ++pushes_by_key_[key];
  } else {
    ++fetches_;
    ++fetches_by_key_[key];
    if (IsAnonymousKey(key)) ++anonymous_fetches_;
  }
}

void GitAdmission::Release(GitRpc rpc, const std::string& key) {
  {
    std::lock_guard lock(mu_);
    auto& by_key = rpc == GitRpc::ReceivePack ? pushes_by_key_ : fetches_by_key_;
    if (rpc == GitRpc::ReceivePack) {
      --pushes_;
    } else {
      --fetches_;
      if (IsAnonymousKey(key)) --anonymous_fetches_;
    }
    auto it = by_key.find(key);
    if (it != by_key.end() && --it->second <= 0) by_key.erase(it);
  }
  cv_.notify_all();
}

Result<GitSlot> GitAdmission::Acquire(GitRpc rpc, std::string principal_key,
                                      const GitWaitNotice& on_wait) {
  std::unique_lock lock(mu_);
  Waiter me{rpc, &principal_key};
  bool earlier_fits = false;
  for (const auto& w : queue_) earlier_fits = earlier_fits || (w.rpc == rpc && Fits(w));
  if (!earlier_fits && Fits(me)) {
    Take(rpc, principal_key);
    return GitSlot(this, rpc, std::move(principal_key));
  }
  if (static_cast<int>(queue_.size()) >= limits_.pack_queue) {
    return MakeError(ErrorCode::Unavailable, std::string(kBusy));
  }
  auto pos = queue_.insert(queue_.end(), me);
  if (on_queued_) on_queued_(static_cast<int>(queue_.size()));
  auto deadline = std::chrono::steady_clock::now() + limits_.pack_queue_wait;
  bool admitted = false;
  int told = -1;
  while (true) {
    if (MayGo(pos)) {
      admitted = true;
      break;
    }
    if (on_wait) {
      // Told outside the lock: the notice writes to a client, which may block.
      int ahead = Ahead(pos);
      if (ahead != told) {
        told = ahead;
        lock.unlock();
        on_wait(ahead);
        lock.lock();
        continue;  // the state may have changed meanwhile
      }
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      admitted = MayGo(pos);
      break;
    }
  }
  queue_.erase(pos);
  if (!admitted) return MakeError(ErrorCode::Unavailable, std::string(kBusy));
  Take(rpc, principal_key);
  // Waiters behind this one may have been held back only by it.
  cv_.notify_all();
  return GitSlot(this, rpc, std::move(principal_key));
}

GitAdmission::Stats GitAdmission::Snapshot() const {
  std::lock_guard lock(mu_);
  return Stats{fetches_, pushes_, static_cast<int>(queue_.size())};
}

// ---------------------------------------------------------------------------------------
// GitService

GitService::GitService(GitRepoAccess repos, GitLimits limits, std::shared_ptr<spdlog::logger> log)
    : repos_(std::move(repos)),
      limits_(limits),
      log_(log ? std::move(log) : Log("git")),
      admission_(limits) {}

GitService::~GitService() = default;

Result<RepoHandle> GitService::OpenFor(const Principal& who, const RepoId& id, GitRpc rpc) {
  Access needed = rpc == GitRpc::UploadPack ? Access::Read : Access::Write;
  auto repo = repos_.open(who, id, needed);
  if (!repo && who.anonymous && repo.error().code == ErrorCode::RepoNotFound) {
    // A private repo asked for anonymously must challenge, so git asks for credentials
    // (git-lfs.md §6); missing repos answer the same so this reveals nothing.
    return MakeError(ErrorCode::Unauthorized, "authentication required for " + id.UrlPath());
  }
  return repo;
}

Result<GitAdvertisement> GitService::InfoRefs(const Principal& who, const RepoId& id, GitRpc rpc,
                                              std::string_view git_protocol) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenFor(who, id, rpc));
  std::string protocol = SanitizeGitProtocol(git_protocol);
  git::Command cmd = BaseCommand(rpc, repo.git_path, protocol);
  cmd.Arg("--stateless-rpc").Arg("--advertise-refs").Arg(".");
  cmd.Timeout(limits_.advertise_timeout).MaxOutput(kMaxAdvertisement);
  HANGAR_ASSIGN_OR_RETURN(auto out, cmd.Run());
  if (!out.ok()) {
    return MakeError(ErrorCode::Internal, std::string(GitRpcName(rpc)) + " of " + id.UrlPath() +
                                              " failed: " + out.stderr_data);
  }
  GitAdvertisement ad;
  // http-backend sends the preamble only when the negotiated version is not 2; receive-pack
  // has no v2 and always answers in v0 (§3.3).
  bool v2 = rpc == GitRpc::UploadPack && GitProtocolVersion(protocol) == 2;
  if (!v2) {
    ad.body = git::PktLine("# service=" + std::string(GitRpcName(rpc)) + "\n");
    ad.body += git::PktFlush();
  }
  ad.body += out.stdout_data;
  return ad;
}

Result<std::unique_ptr<ByteSource>> GitService::Rpc(const Principal& who, const RepoId& id,
                                                    GitRpc rpc, GitRpcRequest request) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenFor(who, id, rpc));

  // Read what fits before taking a slot: a slow client then holds no git process.
  bool all = false;
  HANGAR_ASSIGN_OR_RETURN(auto prefix, Prebuffer(*request.body, limits_.request_prebuffer, &all));

  auto slot = admission_.Acquire(rpc, GitPrincipalKey(who, request.client_address));
  if (!slot) {
    log_->info("{} of {} refused: {}", GitRpcName(rpc), id.UrlPath(), slot.error().message);
    return std::move(slot).error();
  }

  std::string protocol = SanitizeGitProtocol(request.git_protocol);
  git::Command cmd = BaseCommand(rpc, repo.git_path, protocol);
  cmd.Arg("--stateless-rpc").Arg(".").Timeout(limits_.rpc_timeout);
  if (rpc == GitRpc::ReceivePack) {
    SetPusher(cmd, who, id);
  }
  HANGAR_ASSIGN_OR_RETURN(auto process, cmd.Start());

  auto state = std::make_shared<FeedState>();
  state->process = std::shared_ptr<git::Process>(std::move(process));
  state->body = std::move(request.body);
  state->prefix_is_all = all;
  bool changes_refs = rpc == GitRpc::ReceivePack && (!all || HasCommands(prefix));
  state->prefix = std::move(prefix);

  auto source =
      std::make_unique<RpcSource>(rpc, std::move(repo), std::move(*slot), std::move(state),
                                  repos_.after_push, changes_refs, log_);
  HANGAR_TRY(source->StartFeeder());
  return std::unique_ptr<ByteSource>(std::move(source));
}

Result<std::string> GitService::LfsCredential(const Principal& who, const RepoId& id, bool upload,
                                              std::string_view key, std::chrono::seconds ttl) {
  HANGAR_ASSIGN_OR_RETURN(auto repo,
                          OpenFor(who, id, upload ? GitRpc::ReceivePack : GitRpc::UploadPack));
  RepoCredentialClaims claims;
  claims.repo_id = repo.record.id;
  claims.user_id = who.user_id;
  claims.deploy_key_id = who.deploy_key_id;
  claims.key_id = who.ssh_key_id;
  claims.write = upload;
  claims.expires_at = NowUnix() + ttl.count();
  return IssueRepoCredential(key, claims);
}

GitConnection::GitConnection(GitRpc rpc, RepoHandle repo, GitSlot slot,
                             std::unique_ptr<git::Process> process,
                             std::function<void(const RepoHandle&)> after_push)
    : rpc_(rpc),
      repo_(std::move(repo)),
      slot_(std::move(slot)),
      process_(std::move(process)),
      after_push_(std::move(after_push)) {}

GitConnection::~GitConnection() {
  if (!finished_) process_->Kill();
}

Result<int> GitConnection::Finish() {
  finished_ = true;
  auto code = process_->Wait();
  // The push slot is held through AfterPush, as over HTTP.
  if (code && *code == 0 && rpc_ == GitRpc::ReceivePack) after_push_(repo_);
  slot_.Release();
  return code;
}

Result<std::unique_ptr<GitConnection>> GitService::Connect(const Principal& who, const RepoId& id,
                                                           GitRpc rpc,
                                                           std::string_view git_protocol,
                                                           std::string principal_key,
                                                           const GitWaitNotice& on_wait) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenFor(who, id, rpc));
  auto slot = admission_.Acquire(rpc, std::move(principal_key), on_wait);
  if (!slot) {
    log_->info("{} of {} refused: {}", GitRpcName(rpc), id.UrlPath(), slot.error().message);
    return std::move(slot).error();
  }
  git::Command cmd = BaseCommand(rpc, repo.git_path, SanitizeGitProtocol(git_protocol));
  // Without --stateless-rpc: one process speaks the whole conversation. --timeout ends an
  // upload-pack whose client went quiet (git daemon's own guard).
  if (rpc == GitRpc::UploadPack) cmd.Arg("--timeout=600");
  cmd.Arg(".").Timeout(limits_.rpc_timeout);
  if (rpc == GitRpc::ReceivePack) SetPusher(cmd, who, id);
  HANGAR_ASSIGN_OR_RETURN(auto process, cmd.Start());
  return std::make_unique<GitConnection>(rpc, std::move(repo), std::move(*slot), std::move(process),
                                         repos_.after_push);
}

}  // namespace hangar::services

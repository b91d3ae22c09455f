#include "services/mirror/mirror_service.h"

#include <algorithm>
#include <map>

#include "core/file_lock.h"
#include "core/log.h"
#include "core/util.h"
#include "git/command.h"
#include "git/history.h"
#include "git/lfs_scan.h"
#include "git/repo_writer.h"
#include "services/mirror/lfs_remote.h"

namespace hangar::services {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The refs a mirror keeps in step: branches, tags and pull-request refs (hf-api.md §6.6).
// refs/convert/ is the hub's own (the dataset viewer's export) and stays out of it.
constexpr std::string_view kSyncedRefs[] = {"refs/heads/", "refs/tags/", "refs/pr/"};
// Where a pull sync fetches to before the LFS objects are in, and where a push mirror
// remembers what its remote got (under git::kHiddenRefs, hidden from clients).
const std::string kIncoming = std::string(git::kHiddenRefs) + "/mirror/";
std::string PushedPrefix(int64_t mirror_id) {
  return std::string(git::kHiddenRefs) + "/push/" + std::to_string(mirror_id) + "/";
}
constexpr const char* kLockFile = "hangar-mirror.lock";
// A failing pull waits interval × 2^failures, at most this long (or its interval).
constexpr int64_t kMaxBackoffS = 86400;
constexpr int64_t kMaxIntervalS = 365 * 86400;
// Moving the refs once the objects are in is local and quick: it gets this long whatever
// is left of the sync's time.
constexpr auto kRefUpdateTime = std::chrono::seconds(60);

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

bool IsSynced(std::string_view ref) {
  return std::any_of(std::begin(kSyncedRefs), std::end(kSyncedRefs),
                     [&](std::string_view p) { return ref.starts_with(p); });
}

// Name → object of the refs of `repo` under `prefix` (names keep the prefix).
Result<std::map<std::string, Oid>> RefsUnder(const std::string& repo, std::string_view prefix) {
  HANGAR_ASSIGN_OR_RETURN(auto refs, git::ListRefs(repo));
  std::map<std::string, Oid> out;
  for (auto& r : refs) {
    if (r.name.starts_with(prefix)) out.emplace(std::move(r.name), r.object);
  }
  return out;
}

Result<std::map<std::string, Oid>> SyncedRefs(const std::string& repo) {
  HANGAR_ASSIGN_OR_RETURN(auto refs, git::ListRefs(repo));
  std::map<std::string, Oid> out;
  for (auto& r : refs) {
    if (IsSynced(r.name)) out.emplace(std::move(r.name), r.object);
  }
  return out;
}

std::vector<Oid> Objects(const std::map<std::string, Oid>& refs) {
  std::vector<Oid> out;
  for (const auto& [name, oid] : refs) out.push_back(oid);
  return out;
}

std::chrono::milliseconds Left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// A git command inside bare repository `repo`, ignoring the account's global config.
git::Command GitIn(const std::string& repo, std::string_view subcommand,
                   Clock::time_point deadline) {
  git::Command cmd(subcommand);
  cmd.Env("GIT_DIR", repo)
      .Env("GIT_CONFIG_GLOBAL", "/dev/null")
      .Env("GIT_CONFIG_NOSYSTEM", "1")
      .Dir(repo)
      .Timeout(Left(deadline));
  return cmd;
}

// Runs `cmd` under `stop` and wants exit 0; else an error with git's complaint.
Result<void> RunRemote(git::Command& cmd, const std::stop_token& stop, std::string_view what,
                       const std::string& shown) {
  HANGAR_ASSIGN_OR_RETURN(auto process, cmd.Start());
  std::stop_callback kill_on_stop(stop, [&process] { process->Kill(); });
  auto code = process->Wait();
  if (stop.stop_requested()) return MakeError(ErrorCode::Unavailable, "the sync was stopped");
  if (!code) return std::move(code).error();
  if (*code != 0) {
    return MakeError(ErrorCode::BadGateway, std::string(what) + " " + shown +
                                                " failed: " + GitComplaint(process->Stderr(), ""));
  }
  return {};
}

// Moves the refs under `to` of `repo` so that they are exactly `want` (names relative to
// the prefixes), in one transaction that fails when a ref moved since `have` was read.
Result<void> SetRefs(const std::string& repo, const std::map<std::string, Oid>& have,
                     const std::map<std::string, Oid>& want, Clock::time_point deadline) {
  std::string script = "start\n";
  bool changes = false;
  for (const auto& [name, oid] : want) {
    auto it = have.find(name);
    if (it != have.end() && it->second == oid) continue;
    script += "update " + name + " " + oid.Hex() +
              (it == have.end() ? " " + std::string(40, '0') : " " + it->second.Hex()) + "\n";
    changes = true;
  }
  for (const auto& [name, oid] : have) {
    if (want.count(name)) continue;
    script += "delete " + name + " " + oid.Hex() + "\n";
    changes = true;
  }
  if (!changes) return {};
  script += "prepare\ncommit\n";
  git::Command update = GitIn(repo, "update-ref", deadline);
  update.Arg("--stdin");
  HANGAR_ASSIGN_OR_RETURN(auto out, update.Run(script));
  if (!out.ok()) {
    return MakeError(ErrorCode::Conflict,
                     "updating the refs failed: " + GitComplaint(out.stderr_data, ""));
  }
  return {};
}

// `refs` with the prefix `from` of each name replaced by `to`.
std::map<std::string, Oid> Renamed(const std::map<std::string, Oid>& refs, std::string_view from,
                                   std::string_view to) {
  std::map<std::string, Oid> out;
  for (const auto& [name, oid] : refs) {
    if (name.starts_with(from)) out.emplace(std::string(to) + name.substr(from.size()), oid);
  }
  return out;
}

// The git directory of the repository at `dir` (canonical, under a mirror root): `dir`
// itself (bare) or its .git directory. Refused when git would be led elsewhere: a .git
// that is a link or a gitfile, objects or refs that are links, objects borrowed through
// alternates, a worktree's commondir. Errors: BadRequest saying which.
Result<fs::path> LocalGitDir(const fs::path& dir) {
  auto is_real_dir = [](const fs::path& p) {
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    return !ec && st.type() == fs::file_type::directory;
  };
  std::error_code ec;
  fs::path git_dir = dir;
  if (fs::exists(fs::symlink_status(dir / ".git", ec))) {
    if (!is_real_dir(dir / ".git"))
      return Bad(dir.string() +
                 "/.git is a link or a gitfile; a mirror reads repositories "
                 "whose git directory is inside the mirror roots");
    git_dir = dir / ".git";
  }
  for (const char* sub : {"objects", "refs"}) {
    if (!is_real_dir(git_dir / sub))
      return Bad(dir.string() + " is not a git repository (or its " + sub + " is a link)");
  }
  for (const char* file : {"objects/info/alternates", "commondir"}) {
    if (fs::exists(fs::symlink_status(git_dir / file, ec)))
      return Bad(dir.string() + " borrows from another repository (" + file +
                 "); a mirror reads self-contained repositories only");
  }
  return git_dir;
}

// What must never be shown of mirror `m`: its credential and its URL's userinfo.
std::string ScrubFor(const db::MirrorRecord& m, std::string text) {
  return Scrub(std::move(text), {m.credential, UserInfoOf(m.url)});
}

// Whether `path` is `root` or inside it (both canonical).
bool IsUnder(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

// A checked remote: what git is given and how, and where its LFS objects are.
struct MirrorService::Remote {
  ImportSource source;
  GitRemoteSettings git;
  LfsRemoteOptions lfs;
  std::string shown;  // for messages: the URL without a password
};

// One of max_syncs, held for a sync's duration.
class MirrorService::SyncSlot {
 public:
  static Result<SyncSlot> Take(std::atomic<int>& running, int max) {
    if (running.fetch_add(1) >= max) {
      running.fetch_sub(1);
      return MakeError(ErrorCode::Unavailable, "mirror syncs are at their limit; retried later");
    }
    return SyncSlot(running);
  }
  SyncSlot(SyncSlot&& o) noexcept : running_(std::exchange(o.running_, nullptr)) {}
  SyncSlot(const SyncSlot&) = delete;
  ~SyncSlot() {
    if (running_ != nullptr) running_->fetch_sub(1);
  }

 private:
  explicit SyncSlot(std::atomic<int>& running) : running_(&running) {}
  std::atomic<int>* running_;
};

MirrorService::MirrorService(db::MirrorStore& mirrors, db::LfsStore& lfs, storage::BlobStore& blobs,
                             RepoService& repos, ImportService& imports, MirrorOptions options)
    : mirrors_(mirrors),
      lfs_(lfs),
      blobs_(blobs),
      repos_(repos),
      imports_(imports),
      options_(std::move(options)) {
  for (auto& root : options_.local_roots) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(root, ec);
    if (!ec) root = canonical;
  }
}

int64_t MirrorService::Now() const { return options_.now_unix ? options_.now_unix() : NowUnix(); }

Result<MirrorService::Remote> MirrorService::CheckRemote(const std::string& url,
                                                         const std::string& credential) const {
  Remote r;
  HANGAR_ASSIGN_OR_RETURN(r.source, CheckImportSource(url, /*allow_local=*/true));
  r.shown = RedactImportSource(url);
  r.lfs.private_hosts = options_.private_hosts;
  if (r.source.kind == ImportSource::Kind::Local) {
    std::string path = url.starts_with("file://") ? url.substr(7) : url;
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    const bool allowed =
        !ec && std::any_of(options_.local_roots.begin(), options_.local_roots.end(),
                           [&](const fs::path& root) { return IsUnder(canonical, root); });
    // The same answer whether or not the path exists outside the roots: no probing of the
    // server's disk through the message.
    if (!allowed) {
      return Bad("'" + path +
                 "' is not a repository under a directory mirrors may read ([mirrors] "
                 "local_roots)");
    }
    HANGAR_ASSIGN_OR_RETURN(r.lfs.local_git_dir, LocalGitDir(canonical));
    r.source.git_arg = canonical.string();
    if (!credential.empty()) return Bad("a local repository takes no credential");
    return r;
  }
  if (!credential.empty()) {
    if (!url.starts_with("http://") && !url.starts_with("https://"))
      return Bad("a credential is sent over http(s) only");
    HANGAR_TRY(AddBearer(credential, r.git));
    r.lfs.credential = credential;
  }
  HANGAR_ASSIGN_OR_RETURN(r.lfs.endpoint, LfsEndpointOf(url));
  HANGAR_TRY(PinToCheckedHost(options_.private_hosts, r.source, r.git));
  return r;
}

Result<std::pair<db::RepoRecord, db::MirrorRecord>> MirrorService::CreatePull(
    const Principal& who, const PullMirrorRequest& req) {
  const int64_t interval = req.interval_s == 0 ? options_.default_interval_s : req.interval_s;
  if (interval < options_.min_interval_s && !req.for_cache) {
    return Bad("a mirror syncs at most every " + std::to_string(options_.min_interval_s) +
               " seconds");
  }
  if (interval > kMaxIntervalS) return Bad("a mirror syncs at least once a year");
  // Checked before the import so that a refused remote leaves nothing behind.
  HANGAR_ASSIGN_OR_RETURN(Remote remote, CheckRemote(req.url, req.credential));
  ImportRequest in;
  in.type = req.id.type;
  in.ns = req.id.ns;
  in.name = req.id.name;
  in.is_private = req.is_private || req.restricted;
  in.bearer = req.credential;
  in.for_cache = req.for_cache;
  in.source = remote.source.kind == ImportSource::Kind::Local ? remote.source.git_arg : req.url;
  // Local paths were checked against local_roots above; URLs stay pinned by the import.
  in.allow_local = remote.source.kind == ImportSource::Kind::Local;
  HANGAR_ASSIGN_OR_RETURN(db::RepoRecord repo, imports_.Import(who, in));
  db::MirrorRecord m;
  m.repo_id = repo.id;
  m.direction = db::MirrorDirection::Pull;
  m.url = req.url;
  m.credential = req.credential;
  m.interval_s = interval;
  m.created_at = Now();
  m.next_sync_at = m.created_at + interval;
  m.lazy_lfs = req.for_cache;
  m.restricted = req.for_cache && req.restricted;
  auto added = mirrors_.Add(m);
  Result<void> marked = added ? repos_.SetMirror(repo.id, true) : Result<void>(added.error());
  if (marked && m.restricted && !req.is_private) {
    marked = repos_.SetPrivate(MirrorActor(), repo.Id(), false);
    repo.is_private = false;
  }
  if (!marked) {
    // The import succeeded but the repo cannot be a mirror: no half-made mirror stays.
    (void)repos_.Delete(who, repo.Id());
    return std::move(marked).error();
  }
  repo.is_mirror = true;
  // The first sync brings the LFS objects the import left out (a cache runs it itself).
  if (!req.for_cache) Queue(kMirrorPullJob, repo.id);
  Log("mirrors")->info("{} mirrors {}", repo.Id().UrlPath(), remote.shown);
  return std::make_pair(std::move(repo), std::move(*added));
}

Result<db::MirrorRecord> MirrorService::AddPush(const Principal& who, const RepoId& id,
                                                const PushMirrorRequest& req) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Admin));
  HANGAR_ASSIGN_OR_RETURN(Remote remote, CheckRemote(req.url, req.credential));
  // A repository made before kHiddenRefs existed learns to hide what the mirror records.
  HANGAR_TRY(git::ApplyServerConfig(repo.git_path));
  db::MirrorRecord m;
  m.repo_id = repo.record.id;
  m.direction = db::MirrorDirection::Push;
  m.url = req.url;
  m.credential = req.credential;
  m.created_at = Now();
  HANGAR_ASSIGN_OR_RETURN(db::MirrorRecord added, mirrors_.Add(m));
  Queue(kMirrorPushJob, added.id);
  Log("mirrors")->info("{} pushes to {}", id.UrlPath(), remote.shown);
  return added;
}

Result<std::vector<db::MirrorRecord>> MirrorService::List(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  HANGAR_ASSIGN_OR_RETURN(auto all, mirrors_.ForRepo(repo.record.id));
  if (repo.access >= Access::Admin) return all;
  std::erase_if(all,
                [](const db::MirrorRecord& m) { return m.direction != db::MirrorDirection::Pull; });
  for (auto& m : all) m.url = ShownUrl(m, repo.access);
  return all;
}

std::string MirrorService::ShownUrl(const db::MirrorRecord& m, Access access) {
  auto source = CheckImportSource(m.url, /*allow_local=*/true);
  if (access < Access::Admin && source && source->kind == ImportSource::Kind::Local)
    return "(a repository on the server)";
  return RedactImportSource(m.url);
}

Result<std::optional<db::MirrorRecord>> MirrorService::PullOf(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto all, mirrors_.ForRepo(repo_id));
  for (auto& m : all) {
    if (m.direction == db::MirrorDirection::Pull) return std::optional(std::move(m));
  }
  return std::optional<db::MirrorRecord>{};
}

Result<void> MirrorService::Remove(const Principal& who, const RepoId& id, int64_t mirror_id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Admin));
  auto m = mirrors_.Get(mirror_id);
  if (!m || m->repo_id != repo.record.id) {
    if (!m && m.error().code != ErrorCode::NotFound) return std::move(m).error();
    return MakeError(ErrorCode::NotFound,
                     "no mirror " + std::to_string(mirror_id) + " of " + id.UrlPath());
  }
  HANGAR_TRY(mirrors_.Delete(mirror_id));
  if (m->direction == db::MirrorDirection::Pull) {
    HANGAR_TRY(repos_.SetMirror(repo.record.id, false));
  } else {
    // What the remote was last given is no longer needed.
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    auto recorded = RefsUnder(repo.git_path, PushedPrefix(mirror_id));
    if (recorded) (void)SetRefs(repo.git_path, *recorded, {}, deadline);
  }
  return {};
}

Result<int> MirrorService::RequestSync(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Admin));
  HANGAR_ASSIGN_OR_RETURN(auto all, mirrors_.ForRepo(repo.record.id));
  if (all.empty()) return MakeError(ErrorCode::NotFound, id.UrlPath() + " has no mirrors");
  for (const auto& m : all) {
    if (m.direction == db::MirrorDirection::Pull) {
      Queue(kMirrorPullJob, repo.record.id);
    } else {
      Queue(kMirrorPushJob, m.id);
    }
  }
  return static_cast<int>(all.size());
}

void MirrorService::Queue(std::string_view kind, int64_t key) {
  if (!options_.enqueue) return;
  auto queued = options_.enqueue(kind, std::to_string(key), 0);
  if (!queued) {
    Log("mirrors")->warn("queueing {} {} failed: {}", kind, key, queued.error().message);
  }
}

Result<void> MirrorService::QueueDue() {
  HANGAR_ASSIGN_OR_RETURN(auto due, mirrors_.DuePulls(Now(), 1000));
  for (const auto& m : due) Queue(kMirrorPullJob, m.repo_id);
  return {};
}

void MirrorService::AfterPush(const RepoHandle& repo) {
  auto all = mirrors_.ForRepo(repo.record.id);
  if (!all) {
    Log("mirrors")->warn("{}: reading its mirrors failed: {}", repo.record.Id().UrlPath(),
                         all.error().message);
    return;
  }
  for (const auto& m : *all) {
    if (m.direction == db::MirrorDirection::Push) Queue(kMirrorPushJob, m.id);
  }
}

Principal MirrorActor() {
  Principal p = Principal::Hub();
  p.role = TokenRole::Write;
  p.token_name = "mirrors";
  return p;
}

Result<void> MirrorService::Pull(int64_t repo_id, std::stop_token stop) {
  HANGAR_ASSIGN_OR_RETURN(auto pull, PullOf(repo_id));
  if (!pull) return {};  // no longer a mirror
  auto rec = repos_.FindById(repo_id);
  if (!rec) return rec.error().code == ErrorCode::RepoNotFound ? Result<void>() : rec.error();
  if (pull->lazy_lfs && cache_check_) {
    auto still = cache_check_(rec->Id(), *pull);
    if (still && !*still) {
      // Private, gated or gone upstream: the cache forgets it (the next read asks again).
      Log("mirrors")->info("{}: no longer public on its upstream hub; dropped from the cache",
                           rec->Id().UrlPath());
      return repos_.Delete(MirrorActor(), rec->Id());
    }
  }
  if (pull->restricted && pull->credential.empty()) {
    // The token it fetched with was taken back: it waits, as it is, for a reader's token.
    return mirrors_.RecordSync(pull->id, Now(),
                               "no token of a user the upstream lets read it; the copy is kept "
                               "until such a user reads it",
                               Now() + pull->interval_s);
  }
  HANGAR_ASSIGN_OR_RETURN(SyncSlot slot, SyncSlot::Take(running_, options_.max_syncs));
  RepoHandle repo{*rec, repos_.GitPath(rec->Id()), Access::Admin};
  auto lock = FileLock::TryTake(repo.git_path + "/" + kLockFile, "a sync");
  if (!lock) {
    // Another sync of this repo runs (a job of another process): it records its outcome.
    if (lock.error().code == ErrorCode::Conflict) return {};
    return std::move(lock).error();
  }
  auto synced = SyncPull(*pull, repo, stop);
  if (!synced && stop.stop_requested()) return std::move(synced).error();  // taken up again
  const int64_t now = Now();
  int64_t next = now + pull->interval_s;
  std::string error;
  if (!synced) {
    error = ScrubFor(*pull, synced.error().message);
    int64_t delay = pull->interval_s;
    for (int i = 0; i < std::min(pull->failures + 1, 16) && delay < kMaxBackoffS; ++i) delay *= 2;
    next = now + std::min(delay, std::max(kMaxBackoffS, pull->interval_s));
    Log("mirrors")->warn("{}: sync failed (the last good state is kept): {}", rec->Id().UrlPath(),
                         error);
  }
  return mirrors_.RecordSync(pull->id, now, error, next);
}

Result<void> MirrorService::SyncPull(const db::MirrorRecord& m, const RepoHandle& repo,
                                     std::stop_token stop) {
  const auto deadline = Clock::now() + options_.timeout;
  HANGAR_ASSIGN_OR_RETURN(Remote remote, CheckRemote(m.url, m.credential));
  HANGAR_ASSIGN_OR_RETURN(auto before, SyncedRefs(repo.git_path));

  // 1. Every synced ref of the upstream into the incoming namespace, nothing else moved.
  git::Command fetch = GitIn(repo.git_path, "fetch", deadline);
  fetch.Arg("--prune").Arg("--no-tags").Arg("--quiet").Arg("--no-write-fetch-head");
  fetch.EndOfOptions().UserArg(remote.source.git_arg);
  for (std::string_view prefix : kSyncedRefs) {
    std::string under(prefix.substr(5));  // "heads/"
    fetch.Arg("+" + std::string(prefix) + "*:" + kIncoming + under + "*");
  }
  fetch.Env("GIT_ALLOW_PROTOCOL", remote.source.kind == ImportSource::Kind::Local
                                      ? "http:https:git:ssh:file"
                                      : "http:https:git:ssh");
  remote.git.ApplyTo(fetch);
  HANGAR_TRY(RunRemote(fetch, stop, "fetching", remote.shown));
  HANGAR_ASSIGN_OR_RETURN(auto incoming, RefsUnder(repo.git_path, kIncoming));
  const auto want = Renamed(incoming, kIncoming, "refs/");
  if (std::none_of(want.begin(), want.end(),
                   [](const auto& r) { return r.first.starts_with("refs/heads/"); })) {
    return Bad("the upstream " + remote.shown + " has no branches");
  }

  // 2. The LFS objects of what is new (of everything, until a sync succeeded once: the
  // import that made the mirror copied no LFS object), each fetched from the upstream and
  // linked once its bytes are verified. A cache's repo fetches and links an object when it
  // is first read instead (FetchObject).
  if (!m.lazy_lfs) {
    std::vector<Oid> exclude;
    if (m.last_success_at) exclude = Objects(before);
    HANGAR_ASSIGN_OR_RETURN(
        auto pointers, git::PointersBetween(repo.git_path, Objects(want), exclude, Left(deadline)));
    std::vector<git::Pointer> needed;
    for (const auto& p : pointers) {
      HANGAR_ASSIGN_OR_RETURN(auto linked, lfs_.IsLinked(repo.record.id, p.oid));
      if (linked != p.size) needed.push_back(p);
    }
    remote.lfs.deadline = deadline;
    remote.lfs.stop = stop;
    HANGAR_TRY(LfsRemote(remote.lfs).Fetch(needed, blobs_));
    for (const auto& p : needed) HANGAR_TRY(lfs_.Link(repo.record.id, p.oid, p.size));
  }
  if (Clock::now() >= deadline) return MakeError(ErrorCode::Unavailable, "the sync timed out");

  // 3. Only now the repo's refs, all at once.
  HANGAR_TRY(SetRefs(repo.git_path, before, want, Clock::now() + kRefUpdateTime));
  auto head = repos_.FindById(repo.record.id);
  std::string default_ref = "refs/heads/" + (head ? head->default_branch : std::string("main"));
  if (!want.count(default_ref)) {
    // Its default branch went upstream: HEAD follows main, master or the first branch.
    std::string pick = want.count("refs/heads/main")     ? "refs/heads/main"
                       : want.count("refs/heads/master") ? "refs/heads/master"
                                                         : want.lower_bound("refs/heads/")->first;
    git::Command set = GitIn(repo.git_path, "symbolic-ref", deadline);
    set.Arg("HEAD").EndOfOptions().UserArg(pick);
    HANGAR_ASSIGN_OR_RETURN(auto out, set.Run());
    if (!out.ok()) return MakeError(ErrorCode::Internal, "pointing HEAD at " + pick);
  }
  repos_.AfterPush(repo);
  return {};
}

Result<void> MirrorService::FetchObject(int64_t repo_id, const Sha256& oid, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto pull, PullOf(repo_id));
  if (!pull || !pull->lazy_lfs) {
    return MakeError(ErrorCode::NotFound,
                     "the file's repo is no longer a cache of an upstream hub");
  }
  HANGAR_ASSIGN_OR_RETURN(Remote remote, CheckRemote(pull->url, pull->credential));
  remote.lfs.deadline = Clock::now() + options_.timeout;
  auto fetched = LfsRemote(remote.lfs).Fetch({git::Pointer{oid, size}}, blobs_);
  if (!fetched) return MakeError(fetched.error().code, ScrubFor(*pull, fetched.error().message));
  return lfs_.Link(repo_id, oid, size);
}

Result<void> MirrorService::Push(int64_t mirror_id, std::stop_token stop) {
  auto m = mirrors_.Get(mirror_id);
  if (!m) return m.error().code == ErrorCode::NotFound ? Result<void>() : m.error();
  auto rec = repos_.FindById(m->repo_id);
  if (!rec) return rec.error().code == ErrorCode::RepoNotFound ? Result<void>() : rec.error();
  HANGAR_ASSIGN_OR_RETURN(SyncSlot slot, SyncSlot::Take(running_, options_.max_syncs));
  RepoHandle repo{*rec, repos_.GitPath(rec->Id()), Access::Admin};
  auto lock = FileLock::TryTake(repo.git_path + "/" + kLockFile, "a sync");
  if (!lock) {
    // Another sync of this repo runs: this push waits for it as a retried job.
    if (lock.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Unavailable, "another sync of the repo runs");
    return std::move(lock).error();
  }
  auto pushed = SyncPush(*m, repo, stop);
  if (!pushed && stop.stop_requested()) return std::move(pushed).error();
  std::string error = pushed ? "" : ScrubFor(*m, pushed.error().message);
  if (!pushed) Log("mirrors")->warn("{}: push failed: {}", rec->Id().UrlPath(), error);
  return mirrors_.RecordSync(m->id, Now(), error, 0);
}

Result<void> MirrorService::SyncPush(const db::MirrorRecord& m, const RepoHandle& repo,
                                     std::stop_token stop) {
  const auto deadline = Clock::now() + options_.timeout;
  HANGAR_ASSIGN_OR_RETURN(Remote remote, CheckRemote(m.url, m.credential));
  HANGAR_ASSIGN_OR_RETURN(auto local, SyncedRefs(repo.git_path));
  std::erase_if(local, [](const auto& r) { return r.first.starts_with("refs/pr/"); });
  const std::string pushed_prefix = PushedPrefix(m.id);
  HANGAR_ASSIGN_OR_RETURN(auto pushed, RefsUnder(repo.git_path, pushed_prefix));

  // The LFS objects first, so the remote never has a commit whose files it lacks.
  HANGAR_ASSIGN_OR_RETURN(auto pointers, git::PointersBetween(repo.git_path, Objects(local),
                                                              Objects(pushed), Left(deadline)));
  remote.lfs.deadline = deadline;
  remote.lfs.stop = stop;
  HANGAR_TRY(LfsRemote(remote.lfs).Send(pointers, blobs_));

  git::Command push = GitIn(repo.git_path, "push", deadline);
  push.Arg("--prune").Arg("--force").Arg("--quiet").Arg("--no-verify");
  push.EndOfOptions().UserArg(remote.source.git_arg);
  push.Arg("+refs/heads/*:refs/heads/*").Arg("+refs/tags/*:refs/tags/*");
  push.Env("GIT_ALLOW_PROTOCOL", remote.source.kind == ImportSource::Kind::Local
                                     ? "http:https:git:ssh:file"
                                     : "http:https:git:ssh");
  remote.git.ApplyTo(push);
  HANGAR_TRY(RunRemote(push, stop, "pushing to", remote.shown));
  // What the remote has now: the next push sends the LFS objects of newer commits only.
  return SetRefs(repo.git_path, pushed, Renamed(local, "refs/", pushed_prefix),
                 Clock::now() + kRefUpdateTime);
}

}  // namespace hangar::services

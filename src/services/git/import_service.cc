#include "services/git/import_service.h"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/log.h"
#include "core/util.h"
#include "git/command.h"
#include "git/repo_writer.h"

namespace hangar::services {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// An import directory whose deadline passed this long ago belongs to a process that died
// (a live import is killed at its deadline), so the sweep may remove it.
constexpr int64_t kStaleMarginS = 600;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

// One import's scratch directory: <tmp>/import-<deadline unix s>-XXXXXX, removed (with
// whatever is left in it) on destruction.
class WorkDir {
 public:
  static Result<WorkDir> Make(const fs::path& tmp_dir, int64_t deadline_unix) {
    std::error_code ec;
    fs::create_directories(tmp_dir, ec);
    if (ec)
      return MakeError(ErrorCode::Internal, "creating " + tmp_dir.string() + ": " + ec.message());
    std::string templ =
        (tmp_dir / ("import-" + std::to_string(deadline_unix) + "-XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) {
      return MakeError(ErrorCode::Internal, "creating a directory in " + tmp_dir.string());
    }
    return WorkDir(templ);
  }
  WorkDir(WorkDir&& o) noexcept : dir_(std::move(o.dir_)) { o.dir_.clear(); }
  WorkDir(const WorkDir&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string repo() const { return dir_ + "/repo.git"; }

 private:
  explicit WorkDir(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// Runs git inside the bare repository `repo` with what is left of the import's time.
Result<git::Output> RunIn(const std::string& repo, git::Command& cmd, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return MakeError(ErrorCode::Unavailable, "the import timed out");
  cmd.Env("GIT_DIR", repo).Dir(repo).Timeout(left).MaxOutput(16 << 20);
  return cmd.Run();
}

// Runs `cmd` in `repo` and wants exit 0; Internal (naming the command) otherwise.
Result<std::string> MustRun(const std::string& repo, git::Command& cmd,
                            Clock::time_point deadline) {
  HANGAR_ASSIGN_OR_RETURN(auto out, RunIn(repo, cmd, deadline));
  if (!out.ok()) {
    return MakeError(ErrorCode::Internal, cmd.ToString() + " failed: " + out.stderr_data);
  }
  return std::move(out.stdout_data);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Runs the copy under `stop`: git's exit code, or Unavailable when the deadline or a stop
// ended it. `stderr_data` receives git's complaints.
Result<int> RunCopy(git::Command& cmd, const std::stop_token& stop, std::string* stderr_data) {
  HANGAR_ASSIGN_OR_RETURN(auto process, cmd.Start());
  std::stop_callback kill_on_stop(stop, [&process] { process->Kill(); });
  auto code = process->Wait();
  *stderr_data = process->Stderr();
  if (stop.stop_requested()) return MakeError(ErrorCode::Unavailable, "the import was stopped");
  return code;
}

Result<void> CheckStop(const std::stop_token& stop) {
  if (stop.stop_requested()) return MakeError(ErrorCode::Unavailable, "the import was stopped");
  return {};
}

// Points HEAD at the source's default branch when the copy has it, else at main, master
// or the first branch. Returns the branch name. Errors: BadRequest (no branches), Internal.
Result<std::string> SettleHead(const std::string& repo, Clock::time_point deadline) {
  git::Command list("for-each-ref");
  list.Arg("--format=%(refname)").Arg("refs/heads/");
  HANGAR_ASSIGN_OR_RETURN(auto listed, MustRun(repo, list, deadline));
  std::vector<std::string> branches = Lines(listed);
  if (branches.empty()) return Bad("the source has no branches: nothing to import");
  git::Command head("symbolic-ref");
  head.Arg("-q").Arg("HEAD");
  HANGAR_ASSIGN_OR_RETURN(auto current, RunIn(repo, head, deadline));
  std::string target = current.ok() ? Lines(current.stdout_data).front() : "";
  auto has = [&](const std::string& ref) {
    return std::find(branches.begin(), branches.end(), ref) != branches.end();
  };
  if (!has(target)) {
    target = has("refs/heads/main")     ? "refs/heads/main"
             : has("refs/heads/master") ? "refs/heads/master"
                                        : branches.front();
    git::Command set("symbolic-ref");
    set.Arg("HEAD").EndOfOptions().UserArg(target);
    HANGAR_TRY(MustRun(repo, set, deadline));
  }
  return target.substr(std::string_view("refs/heads/").size());
}

// Turns the fresh mirror into a standalone hub repository: no remote pointing back at the
// source (it may carry credentials), no borrowed objects, the server's git config.
Result<void> Detach(const std::string& repo, Clock::time_point deadline) {
  git::Command drop("config");
  drop.Arg("--remove-section").Arg("remote.origin");
  auto dropped = RunIn(repo, drop, deadline);  // exit 128: no such section
  if (!dropped) return std::move(dropped).error();
  // A local source with alternates is cloned borrowing them: pack those objects in.
  std::error_code ec;
  fs::path alternates = fs::path(repo) / "objects" / "info" / "alternates";
  if (fs::exists(alternates, ec)) {
    git::Command repack("repack");
    repack.Arg("-a").Arg("-d").Arg("-q");
    HANGAR_TRY(MustRun(repo, repack, deadline));
    fs::remove(alternates, ec);
    if (ec) return MakeError(ErrorCode::Internal, "removing alternates: " + ec.message());
  }
  return git::ApplyServerConfig(repo);
}

// True when `repo` holds a single-file commit-graph with changed-path Bloom filters (its
// chunk table lists BIDX and BDAT): a local clone copies the source's.
bool HasBloomGraph(const std::string& repo) {
  std::ifstream in(repo + "/objects/info/commit-graph", std::ios::binary);
  char header[8];
  if (!in.read(header, sizeof header) || std::string_view(header, 4) != "CGPH" || header[7] != 0) {
    return false;
  }
  bool bidx = false, bdat = false;
  const int chunks = static_cast<unsigned char>(header[6]);
  for (int i = 0; i < chunks; ++i) {
    char entry[12];
    if (!in.read(entry, sizeof entry)) return false;
    bidx |= std::string_view(entry, 4) == "BIDX";
    bdat |= std::string_view(entry, 4) == "BDAT";
  }
  return bidx && bdat;
}

// Writes the commit-graph with changed-path Bloom filters, as one file (the layout
// git::WriteCommitGraph keeps after pushes). When the copy brought the source's graph with
// filters, a split write first adds only the commits it lacks: nothing at all when it
// covers every ref (the common case for a local source, and seconds saved on a large
// one); a layer it did add is folded into one file by the full write, which reuses every
// filter already computed.
Result<void> WriteGraph(const std::string& repo, Clock::time_point deadline) {
  if (HasBloomGraph(repo)) {
    git::Command split("commit-graph");
    split.Arg("write")
        .Arg("--reachable")
        .Arg("--changed-paths")
        .Arg("--split")
        .Arg("--no-progress");
    HANGAR_TRY(MustRun(repo, split, deadline));
    std::error_code ec;
    if (!fs::exists(fs::path(repo) / "objects/info/commit-graphs/commit-graph-chain", ec) &&
        HasBloomGraph(repo)) {
      return {};
    }
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  auto graph = git::WriteCommitGraph(repo, std::max(left, std::chrono::milliseconds(1)));
  if (!graph && graph.error().code == ErrorCode::Unavailable) {
    return MakeError(ErrorCode::Unavailable, "the import timed out");
  }
  return graph;
}

}  // namespace

ImportService::ImportService(db::RepoStore& repos, db::UserStore& users, AccessPolicy& access,
                             RepoService& repos_svc, ImportOptions options)
    : repos_(repos),
      users_(users),
      access_(access),
      repos_svc_(repos_svc),
      options_(std::move(options)) {}

Result<RepoId> ImportService::Authorize(const Principal& who, const ImportRequest& req) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoId::Parse(req.type, req.ns, req.name));
  if (req.for_cache) return NotTaken(id);
  if (who.anonymous) {
    return MakeError(ErrorCode::Unauthorized, "authentication required to import a repo");
  }
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden, "token '" + who.token_name + "' is read-only");
  }
  if (access_.NamespaceAccess(who, id.ns) < Access::Write) {
    return MakeError(ErrorCode::Forbidden, "you cannot create repos in namespace '" + id.ns + "'");
  }
  // Site admins may write anywhere, so the namespace itself must be checked.
  HANGAR_ASSIGN_OR_RETURN(auto kind, users_.GetNamespaceKind(id.ns));
  if (kind == db::NamespaceKind::None) {
    return MakeError(ErrorCode::NotFound, "namespace '" + id.ns + "' is no user or org");
  }
  return NotTaken(id);
}

Result<RepoId> ImportService::NotTaken(const RepoId& id) {
  auto existing = repos_.Find(id);
  if (existing) return MakeError(ErrorCode::Conflict, "Repository already exists: " + id.UrlPath());
  if (existing.error().code != ErrorCode::RepoNotFound) return std::move(existing).error();
  return id;
}

void ImportService::SweepStale() {
  std::error_code ec;
  const int64_t now = NowUnix();
  for (fs::directory_iterator it(options_.tmp_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("import-", 0) != 0) continue;
    int64_t deadline = std::strtoll(name.c_str() + 7, nullptr, 10);
    if (deadline <= 0 || deadline + kStaleMarginS > now) continue;
    std::error_code rm_ec;
    fs::remove_all(it->path(), rm_ec);
    Log("services")->info("import: removed the leftovers of an interrupted import: {}", name);
  }
}

Result<db::RepoRecord> ImportService::Import(const Principal& who, const ImportRequest& req) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, Authorize(who, req));
  HANGAR_ASSIGN_OR_RETURN(ImportSource source, CheckImportSource(req.source, req.allow_local));
  // Git enforces the transport list itself too (redirects, rewritten URLs, submodules).
  git::Command clone("clone");
  GitRemoteSettings remote;
  // A cache's upstream is the operator's own choice ([upstream] url), any address; but
  // git stays on it (no redirect elsewhere, where its credential would go too).
  if (!req.allow_local && !req.for_cache && source.kind == ImportSource::Kind::Url) {
    HANGAR_TRY(PinToCheckedHost(options_.private_hosts, source, remote));
  }
  if (req.for_cache) remote.config.emplace_back("http.followRedirects", "false");
  if (!req.bearer.empty()) HANGAR_TRY(AddBearer(req.bearer, remote));
  remote.ApplyTo(clone);
  const std::string shown = RedactImportSource(req.source);
  const auto deadline = Clock::now() + options_.timeout;
  const int64_t deadline_unix =
      NowUnix() + std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count() + 1;
  SweepStale();
  HANGAR_ASSIGN_OR_RETURN(WorkDir work, WorkDir::Make(options_.tmp_dir, deadline_unix));
  const std::string repo = work.repo();

  clone.Arg("--mirror").Arg("--quiet").EndOfOptions().UserArg(source.git_arg).Arg(repo);
  clone.Env("GIT_ALLOW_PROTOCOL", source.kind == ImportSource::Kind::Local
                                      ? "http:https:git:ssh:file"
                                      : "http:https:git:ssh");
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  clone.Timeout(left);
  std::string complaints;
  auto cloned = RunCopy(clone, req.stop, &complaints);
  if (!cloned) {
    if (cloned.error().code == ErrorCode::Unavailable && !req.stop.stop_requested()) {
      return MakeError(ErrorCode::Unavailable, "importing " + shown + " timed out");
    }
    return std::move(cloned).error();
  }
  if (*cloned != 0) {
    return Bad("cannot read " + shown + ": " +
               Scrub(GitComplaint(complaints, repo), {UserInfoOf(req.source), req.bearer}));
  }
  std::error_code ec;
  if (fs::exists(fs::path(repo) / "shallow", ec)) {
    return Bad("the source " + shown + " is a shallow clone; import a full repository");
  }
  HANGAR_TRY(CheckStop(req.stop));
  HANGAR_ASSIGN_OR_RETURN(std::string branch, SettleHead(repo, deadline));
  HANGAR_TRY(Detach(repo, deadline));
  auto graph = WriteGraph(repo, deadline);
  if (!graph) {
    if (graph.error().code == ErrorCode::Unavailable) {
      return MakeError(ErrorCode::Unavailable, "importing " + shown + " timed out");
    }
    return std::move(graph).error();
  }
  HANGAR_TRY(CheckStop(req.stop));
  git::Command head("log");
  head.Arg("-1").Arg("--format=%H %ct").Arg("HEAD");
  HANGAR_ASSIGN_OR_RETURN(std::string head_line, MustRun(repo, head, deadline));

  // Only now reserve the name: the row appears together with a complete repository.
  db::RepoRecord rec;
  rec.type = id.type;
  rec.ns = id.ns;
  rec.name = id.name;
  rec.is_private = req.is_private;
  rec.default_branch = branch;
  rec.last_commit = head_line.substr(0, head_line.find(' '));
  rec.last_modified = std::strtoll(head_line.c_str() + rec.last_commit.size(), nullptr, 10);
  HANGAR_ASSIGN_OR_RETURN(db::RepoRecord created, repos_.Create(rec));
  const std::string final_path = repos_svc_.GitPath(id);
  if (fs::exists(final_path, ec)) {
    // No row owned it: left by a crash between an earlier delete's row removal and rename.
    (void)git::DeleteRepo(final_path);
  }
  auto moved = git::MoveRepo(repo, final_path);
  if (!moved) {
    (void)repos_.Delete(id);
    return std::move(moved).error();
  }
  Log("services")->info("imported {} from {} ({} as default branch)", id.UrlPath(), shown, branch);
  if (options_.after_import) options_.after_import(id, final_path);
  return created;
}

}  // namespace hangar::services

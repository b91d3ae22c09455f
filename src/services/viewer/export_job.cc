// The export job (export_job.h).

#include "services/viewer/export_job.h"

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include "core/log.h"
#include "core/util.h"
#include "git/commit_builder.h"
#include "git/pointer.h"
#include "git/ref_writer.h"
#include "services/viewer/shard_files.h"

namespace hangar::services::viewer {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// Shards stored as blobs at once (their writes and syncs overlap).
constexpr size_t kStoreThreads = 4;

using Clock = std::chrono::steady_clock;
int64_t Millis(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

constexpr std::string_view kExportRef = "refs/convert/parquet";
constexpr std::string_view kGitattributes = "*.parquet filter=lfs diff=lfs merge=lfs -text\n";
constexpr uint64_t kMaxReadme = 1 << 20;

// The viewer's error code and message for a failure: the code the message starts with
// ("EmptyDatasetError: …"), else DatasetGenerationError. Local paths in the message are
// replaced by the repo paths they hold.
std::pair<std::string, std::string> ViewerError(const Error& e,
                                                const std::map<std::string, std::string>& paths) {
  std::string message = e.message;
  for (const auto& [local, repo_path] : paths) {
    for (size_t at = message.find(local); at != std::string::npos;
         at = message.find(local, at + repo_path.size()))
      message.replace(at, local.size(), repo_path);
  }
  size_t colon = message.find(": ");
  if (colon != std::string::npos && colon < 48 && message.substr(0, colon).ends_with("Error") &&
      message.substr(0, colon).find(' ') == std::string::npos)
    return {message.substr(0, colon), message.substr(colon + 2)};
  if (e.code == ErrorCode::Unavailable)
    return {"DatasetGenerationError",
            "the conversion took too long or needed too much memory: " + message};
  return {"DatasetGenerationError", "the split could not be read: " + message};
}

db::ViewerSplit SplitRow(const std::string& config, const std::string& split, int ordinal) {
  db::ViewerSplit row;
  row.config = config;
  row.split = split;
  row.ordinal = ordinal;
  return row;
}

// The rows BeginExport starts with: every split Pending, a config that failed as a whole
// (split "") Failed with its error; ordinals in the layout's order.
std::vector<db::ViewerSplit> PlannedRows(const DatasetLayout& layout) {
  std::vector<db::ViewerSplit> rows;
  for (const auto& config : layout.configs) {
    if (!config.error_code.empty()) {
      db::ViewerSplit row = SplitRow(config.name, "", static_cast<int>(rows.size()));
      row.status = db::ExportStatus::Failed;
      row.error_code = config.error_code;
      row.error = config.error;
      rows.push_back(std::move(row));
    }
    for (const auto& split : config.splits) {
      db::ViewerSplit row = SplitRow(config.name, split.name, static_cast<int>(rows.size()));
      row.builder = std::string(BuilderName(config.builder));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// Removes a job's attempt file when the job returns, whichever way; a process that dies
// mid-job leaves it, and so counts the attempt.
struct AttemptGuard {
  std::string path;
  ~AttemptGuard() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// Runs of one commit's export that may end with the process (then it is marked failed).
constexpr int kMaxAttempts = 2;

git::TreeChange Change(git::TreeChange::Kind kind, std::string path, std::string content = "") {
  git::TreeChange c;
  c.kind = kind;
  c.path = std::move(path);
  c.content = std::move(content);
  return c;
}

std::string ColumnsJson(const std::vector<duckdb::Column>& columns) {
  json::array out;
  for (const auto& c : columns) out.push_back(json::object{{"name", c.name}, {"type", c.sql_type}});
  return json::serialize(out);
}

}  // namespace

struct ExportJob::Context {
  RepoHandle repo;
  Oid head;
  std::string source;  // head in hex
  std::map<std::string, Entry> files;
  fs::path dir;  // this job's work directory
  const std::atomic<bool>* cancel = nullptr;
  bool superseded = false;
  std::vector<db::ViewerFile> exported;  // every split's files, for the commit
};

std::string ExportJob::AttemptPath(int64_t repo_id) const {
  return (fs::path(options_.work_dir) / (std::to_string(repo_id) + ".attempt")).string();
}

Result<int> ExportJob::CountAttempt(int64_t repo_id, const std::string& source) {
  std::string path = AttemptPath(repo_id);
  std::string seen;
  int count = 0;
  if (std::ifstream in(path); in) in >> seen >> count;
  count = seen == source ? count + 1 : 1;
  std::error_code ec;
  fs::create_directories(options_.work_dir, ec);
  std::ofstream out(path, std::ios::trunc);
  out << source << ' ' << count << '\n';
  out.close();
  if (!out) return MakeError(ErrorCode::Internal, "cannot write " + path);
  return count;
}

Result<bool> ExportJob::RefuseRetry(int64_t repo_id, const std::string& source) {
  HANGAR_ASSIGN_OR_RETURN(int attempt, CountAttempt(repo_id, source));
  if (attempt <= kMaxAttempts) return false;
  Log("viewer")->warn("repo {}: the export of {} stopped the process {} times; not retried",
                      repo_id, source, kMaxAttempts);
  HANGAR_TRY(deps_.store.SetExportStatus(
      repo_id, source, db::ExportStatus::Failed, "", "UnexpectedError",
      "the conversion of this commit stopped the server; it is tried again after the next push"));
  if (options_.on_change) options_.on_change(repo_id);
  return true;
}

ExportJob::ExportJob(ExportDeps deps, ExportOptions options)
    : deps_(deps), options_(std::move(options)) {}

Result<void> ExportJob::Run(int64_t repo_id, const std::atomic<bool>& cancel) {
  auto record = deps_.repos.FindById(repo_id);
  if (!record) {
    if (record.error().code == ErrorCode::RepoNotFound) return {};
    return std::move(record).error();
  }
  if (record->type != RepoType::Dataset) return {};
  Context ctx;
  ctx.cancel = &cancel;
  ctx.repo = RepoHandle{*record, deps_.repo_service.GitPath(record->Id()), Access::Admin};
  auto head = deps_.content.ResolveRevision(ctx.repo, record->default_branch);
  if (!head) return {};  // an empty repo: nothing to show
  ctx.head = *head;
  ctx.source = head->Hex();
  // Already exported (a reader found it stale before this job's row was written, say).
  HANGAR_ASSIGN_OR_RETURN(auto existing, deps_.store.GetExport(repo_id));
  if (existing && existing->source_commit == ctx.source &&
      (existing->status == db::ExportStatus::Ready || existing->status == db::ExportStatus::Failed))
    return {};
  // A job that killed the process (a reader crashing on a hostile file) is not run a third
  // time for the same commit: the restart would die again, and again.
  AttemptGuard guard{AttemptPath(repo_id)};
  HANGAR_ASSIGN_OR_RETURN(bool refused, RefuseRetry(repo_id, ctx.source));
  if (refused) return {};
  ctx.dir = fs::path(options_.work_dir) / std::to_string(repo_id);
  std::error_code ec;
  fs::remove_all(ctx.dir, ec);  // what a killed job left
  fs::create_directories(ctx.dir, ec);
  if (ec) return MakeError(ErrorCode::Internal, "cannot create " + ctx.dir.string());
  fs::create_directories(options_.cache_dir, ec);

  HANGAR_ASSIGN_OR_RETURN(auto layout, ReadLayout(ctx));

  std::vector<db::ViewerSplit> rows =
      layout ? PlannedRows(*layout) : std::vector<db::ViewerSplit>{};
  bool viewer = layout ? layout->viewer : true;
  HANGAR_TRY(deps_.store.BeginExport(repo_id, ctx.source, viewer, rows,
                                     layout ? layout->language : std::string()));
  auto notify = [&] {
    if (options_.on_change) options_.on_change(repo_id);
  };
  notify();
  auto finish = [&](db::ExportStatus status, const std::string& commit, const std::string& code,
                    const std::string& error) -> Result<void> {
    HANGAR_TRY(deps_.store.SetExportStatus(repo_id, ctx.source, status, commit, code, error));
    notify();
    fs::remove_all(ctx.dir, ec);
    return {};
  };
  if (!layout) {
    std::string message = layout.error().message;
    size_t colon = message.find(": ");
    return finish(db::ExportStatus::Failed, "", message.substr(0, colon),
                  message.substr(colon + 2));
  }
  if (!viewer) return finish(db::ExportStatus::Ready, "", "", "");
  HANGAR_ASSIGN_OR_RETURN(
      bool current,
      deps_.store.SetExportStatus(repo_id, ctx.source, db::ExportStatus::Running, "", "", ""));
  if (!current) return {};

  int ordinal = 0;
  for (const auto& config : layout->configs) {
    if (!config.error_code.empty()) ++ordinal;
    for (const auto& split : config.splits) {
      if (cancel.load() || ctx.superseded) return {};
      HANGAR_TRY(RunSplit(ctx, config, split, ordinal++));
      notify();
    }
  }
  if (cancel.load() || ctx.superseded) return {};
  auto commit = CommitExport(ctx);
  if (!commit) {
    Log("viewer")->warn("dataset {}: export commit failed: {}", record->Id().UrlPath(),
                        commit.error().message);
    return finish(db::ExportStatus::Failed, "", "UnexpectedError",
                  "the Parquet export could not be committed");
  }
  return finish(db::ExportStatus::Ready, *commit, "", "");
}

Result<Result<DatasetLayout>> ExportJob::ReadLayout(Context& ctx) {
  HANGAR_ASSIGN_OR_RETURN(auto tree, deps_.content.ListTree(ctx.repo, ctx.head, "", true));
  std::vector<std::string> paths;
  for (const auto& e : *tree) {
    if (e.git.is_dir) continue;
    paths.push_back(e.git.path);
    ctx.files.emplace(e.git.path, e);
  }
  HANGAR_ASSIGN_OR_RETURN(auto readme,
                          deps_.content.ReadText(ctx.repo, ctx.head, "README.md", kMaxReadme));
  return DeriveLayout(paths, readme.value_or(""));
}

Result<void> ExportJob::RunSplit(Context& ctx, const ConfigLayout& config, const SplitLayout& split,
                                 int ordinal) {
  db::ViewerSplit row = SplitRow(config.name, split.name, ordinal);
  row.builder = std::string(BuilderName(config.builder));
  row.status = db::ExportStatus::Running;
  HANGAR_ASSIGN_OR_RETURN(bool current,
                          deps_.store.PutSplit(ctx.repo.record.id, ctx.source, row, std::nullopt));
  if (!current) {
    ctx.superseded = true;
    return {};
  }
  fs::path dir = ctx.dir / std::to_string(ordinal);
  fs::path src_dir = dir / "src", out_dir = dir / "out";
  std::error_code ec;
  fs::create_directories(src_dir, ec);
  fs::create_directories(out_dir, ec);

  // The sources, on local disk under names keeping their suffixes (.csv.gz).
  std::vector<SourceFile> sources;
  std::map<std::string, std::string> local_to_repo;
  auto fail = [&](const Error& e) -> Result<void> {
    auto [code, message] = ViewerError(e, local_to_repo);
    row.status = db::ExportStatus::Failed;
    row.error_code = code;
    row.error = message;
    fs::remove_all(dir, ec);
    HANGAR_ASSIGN_OR_RETURN(
        bool ok, deps_.store.PutSplit(ctx.repo.record.id, ctx.source, row, std::nullopt));
    ctx.superseded |= !ok;
    return {};
  };
  auto t0 = Clock::now();  // where the time goes, logged per split
  for (size_t i = 0; i < split.files.size(); ++i) {
    const Entry& entry = ctx.files.at(split.files[i]);
    std::string name = fs::path(split.files[i]).filename().string();
    size_t dot = name.find('.');
    fs::path local =
        src_dir /
        (std::to_string(i) + AsciiLower(name.substr(dot == std::string::npos ? name.size() : dot)));
    auto body = deps_.content.Open(ctx.repo, entry, false, 0, std::nullopt);
    if (!body)
      return fail(MakeError(ErrorCode::Unprocessable, "DataFilesNotFoundError: the LFS object of " +
                                                          split.files[i] + " is not stored"));
    HANGAR_TRY(LinkOrCopy(**body, local));
    local_to_repo.emplace(local.string(), split.files[i]);
    sources.push_back({local.string(), entry.Size()});
    row.num_bytes_original += static_cast<int64_t>(entry.Size());
  }

  auto t1 = Clock::now();
  auto result =
      viewer::ExportSplit(deps_.engine, config, sources, out_dir.string(), options_.limits);
  if (!result) return fail(result.error());
  auto t2 = Clock::now();

  HANGAR_ASSIGN_OR_RETURN(auto files, StoreShards(ctx, config, split, *result, row));
  fs::remove_all(dir, ec);
  Log("viewer")->info("dataset {} {}/{}: sources {} ms, conversion {} ms, {} shards stored {} ms",
                      ctx.repo.record.Id().UrlPath(), config.name, split.name, Millis(t0, t1),
                      Millis(t1, t2), files.size(), Millis(t2, Clock::now()));

  row.status = db::ExportStatus::Ready;
  row.partial = result->partial;
  row.num_rows = result->num_rows;
  row.estimated_num_rows = result->estimated_num_rows;
  row.num_columns = static_cast<int64_t>(result->columns.size());
  // In-memory size estimated as twice the Parquet bytes (compression and encoding).
  row.num_bytes_memory = 2 * row.num_bytes_parquet;
  row.columns_json = ColumnsJson(result->columns);
  HANGAR_ASSIGN_OR_RETURN(bool ok,
                          deps_.store.PutSplit(ctx.repo.record.id, ctx.source, row, files));
  if (!ok) {
    ctx.superseded = true;
    return {};
  }
  ctx.exported.insert(ctx.exported.end(), files.begin(), files.end());
  return {};
}

Result<std::vector<db::ViewerFile>> ExportJob::StoreShards(Context& ctx, const ConfigLayout& config,
                                                           const SplitLayout& split,
                                                           const SplitExport& result,
                                                           db::ViewerSplit& row) {
  // Each shard into the blob store (or, for a native Parquet source, its LFS object as it
  // is), linked to the repo, and into the local cache the queries read.
  std::string split_dir = config.name + "/" + (result.partial ? "partial-" : "") + split.name;
  auto native_of = [&](const Shard& shard) -> const Entry* {
    return shard.native_source ? &ctx.files.at(split.files[*shard.native_source]) : nullptr;
  };
  std::vector<std::pair<std::string, uint64_t>> written;  // the shards the export wrote
  for (const Shard& shard : result.shards) {
    const Entry* native = native_of(shard);
    if (!native || !native->lfs) written.emplace_back(shard.local_path, shard.size);
  }
  HANGAR_ASSIGN_OR_RETURN(
      auto stored, viewer::StoreShards(deps_.blobs, written, options_.cache_dir, kStoreThreads));
  std::vector<db::ViewerFile> files;
  int64_t offset = 0;
  size_t next_stored = 0;
  for (size_t i = 0; i < result.shards.size(); ++i) {
    const Shard& shard = result.shards[i];
    db::ViewerFile f;
    f.shard = static_cast<int>(i);
    char name[32];
    std::snprintf(name, sizeof name, "/%04zu.parquet", i);
    f.path = split_dir + name;
    f.size = static_cast<int64_t>(shard.size);
    f.row_offset = offset;
    f.num_rows = shard.num_rows;
    f.row_group_rows = shard.row_group_rows;
    offset += shard.num_rows;
    const Entry* native = native_of(shard);
    // A native Parquet source is indexed, not copied.
    f.sha256 = native && native->lfs ? native->lfs->oid : stored.at(next_stored++);
    HANGAR_TRY(deps_.lfs.Link(ctx.repo.record.id, f.sha256, shard.size));
    if (native)  // a source: it stays in the work dir, so the cache gets a copy
      HANGAR_TRY(IntoCache(shard.local_path, ShardCachePath(options_.cache_dir, f.sha256), true));
    row.num_bytes_parquet += f.size;
    files.push_back(std::move(f));
  }
  return files;
}

Result<std::string> ExportJob::CommitExport(Context& ctx) {
  const std::string& git_path = ctx.repo.git_path;
  git::Signature author{"Hangar", "noreply@hangar.local", NowUnix(), 0};
  auto existing = deps_.content.ResolveRevision(ctx.repo, kExportRef);
  std::optional<Oid> parent;
  std::vector<git::TreeChange> changes;
  if (existing) {
    parent = *existing;
    HANGAR_ASSIGN_OR_RETURN(auto top, deps_.content.ListTree(ctx.repo, *existing, "", false));
    for (const auto& e : *top) {
      if (e.git.path == ".gitattributes") continue;
      changes.push_back(Change(
          e.git.is_dir ? git::TreeChange::Kind::DeleteFolder : git::TreeChange::Kind::DeleteFile,
          e.git.path));
    }
  } else {
    // The branch starts from a commit of its own, so it never holds the data files (the
    // public hub starts it at the repo's first commit, which holds only .gitattributes).
    HANGAR_ASSIGN_OR_RETURN(Oid root,
                            git::CommitEmptyRoot(git_path, author, "Start the Parquet export"));
    auto created = git::CreateRef(git_path, std::string(kExportRef), root, false);
    if (!created && created.error().code != ErrorCode::Conflict) return std::move(created).error();
    HANGAR_ASSIGN_OR_RETURN(parent, deps_.content.ResolveRevision(ctx.repo, kExportRef));
  }
  changes.push_back(
      Change(git::TreeChange::Kind::Upsert, ".gitattributes", std::string(kGitattributes)));
  for (const auto& f : ctx.exported) {
    changes.push_back(Change(git::TreeChange::Kind::Upsert, f.path,
                             git::FormatPointer({f.sha256, static_cast<uint64_t>(f.size)})));
  }
  git::CommitRequest req;
  req.branch = std::string(kExportRef);
  req.expected_parent = parent;
  req.changes = std::move(changes);
  req.author = author;
  req.message = "Update parquet files";
  HANGAR_ASSIGN_OR_RETURN(Oid commit, git::CommitChanges(git_path, req));
  return commit.Hex();
}

}  // namespace hangar::services::viewer

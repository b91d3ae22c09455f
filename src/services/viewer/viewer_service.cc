// ViewerService: access, state, and the answers about splits and files (viewer_service.h).
// Rows are in viewer_rows.cc, files, info and size in viewer_files.cc.

#include "services/viewer/viewer_service.h"

#include <set>

#include "core/log.h"
#include "core/util.h"
#include "services/viewer/features.h"
#include "services/viewer/shard_files.h"
#include "services/viewer/viewer_internal.h"

namespace hangar::services::viewer {
namespace json = boost::json;

bool IsReady(const db::ViewerSplit& s) { return s.status == db::ExportStatus::Ready; }
bool IsWaiting(const db::ViewerSplit& s) {
  return s.status == db::ExportStatus::Pending || s.status == db::ExportStatus::Running;
}

namespace {

// The cache key of a split of one export.
std::string FilesKey(const ViewerService::State& state, const db::ViewerSplit& split) {
  return std::to_string(state.export_row.repo_id) + '\n' + state.export_row.source_commit + '\n' +
         split.config + '\n' + split.split;
}

json::object ErrorBody(const db::ViewerSplit& s) { return json::object{{"error", s.error}}; }

}  // namespace

std::vector<std::string> ConfigNames(const ViewerService::State& state) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& s : state.splits)
    if (seen.insert(s.config).second) out.push_back(s.config);
  return out;
}

bool HasConfig(const ViewerService::State& state, const std::string& config) {
  for (const auto& s : state.splits)
    if (s.config == config) return true;
  return false;
}

void PendingAndFailed(const ViewerService::State& state, const std::string& dataset,
                      json::object& out, bool split_names) {
  json::array pending, failed;
  for (const auto& config : ConfigNames(state)) {
    const db::ViewerSplit* failure = nullptr;
    bool waiting = false;
    for (const auto& s : state.splits) {
      if (s.config != config || (split_names && !s.split.empty())) continue;
      waiting |= IsWaiting(s);
      if (s.status == db::ExportStatus::Failed && !failure) failure = &s;
    }
    if (failure)
      failed.push_back(
          json::object{{"dataset", dataset}, {"config", config}, {"error", ErrorBody(*failure)}});
    else if (waiting)
      pending.push_back(json::object{{"dataset", dataset}, {"config", config}});
  }
  out["pending"] = std::move(pending);
  out["failed"] = std::move(failed);
}

bool AnyPartial(const ViewerService::State& state, const std::string& config) {
  for (const auto& s : state.splits)
    if ((config.empty() || s.config == config) && IsReady(s) && s.partial) return true;
  return false;
}

std::vector<duckdb::Column> ColumnsFromJson(const std::string& columns_json) {
  std::vector<duckdb::Column> out;
  boost::system::error_code ec;
  json::value v = json::parse(columns_json, ec);
  if (ec || !v.is_array()) return out;
  for (const auto& c : v.as_array()) {
    const auto* o = c.if_object();
    if (!o || !o->contains("name") || !o->contains("type")) continue;
    out.push_back({std::string(o->at("name").as_string()), duckdb::ColumnType::String,
                   std::string(o->at("type").as_string())});
  }
  return out;
}

Error CachedError(const std::string& code, const std::string& message) {
  return MakeError(ErrorCodeByName(code).value_or(ErrorCode::UnexpectedError), message);
}

ViewerService::ViewerService(ViewerDeps deps, ViewerOptions options)
    : deps_(deps),
      options_(std::move(options)),
      states_(1024, options_.state_ttl_ms),
      files_(std::max<size_t>(1, options_.file_cache_entries)),
      schemas_(std::max<size_t>(1, options_.file_cache_entries)),
      statistics_(256) {
  if (!options_.search_dir.empty())
    search_ = std::make_unique<SearchIndexes>(
        options_.search_dir, deps_.engine, [this](const Sha256& sha256) {
          return FetchShard(deps_.blobs, options_.cache_dir, sha256);
        });
}

ViewerService::~ViewerService() = default;

void ViewerService::AfterPush(const RepoHandle& repo, const std::string& head) {
  if (repo.record.type != RepoType::Dataset || !deps_.queue || head.empty()) return;
  Invalidate(repo.record.id);
  // A push to another branch leaves the export of the default branch's head as it is.
  auto row = deps_.store.GetExport(repo.record.id);
  if (row && *row && (*row)->source_commit == head) return;
  deps_.queue->Enqueue(repo.record.id);
}

void ViewerService::ResumeUnfinished() {
  if (!deps_.queue) return;
  auto ids = deps_.store.ListUnfinished();
  if (!ids) {
    Log("viewer")->warn("unfinished exports not listed: {}", ids.error().message);
    return;
  }
  for (int64_t id : *ids) deps_.queue->Enqueue(id, false);
}

void ViewerService::Invalidate(int64_t repo_id) { states_.Erase(std::to_string(repo_id)); }

Result<std::shared_ptr<const ViewerService::State>> ViewerService::LoadState(int64_t repo_id) {
  std::string key = std::to_string(repo_id);
  if (auto hit = states_.Get(key, NowUnixMillis())) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto row, deps_.store.GetExport(repo_id));
  auto state = std::make_shared<State>();
  if (row) {
    state->export_row = std::move(*row);
    HANGAR_ASSIGN_OR_RETURN(state->splits, deps_.store.ListSplits(repo_id));
  }
  std::shared_ptr<const State> out = std::move(state);
  states_.Put(key, out, NowUnixMillis());
  return out;
}

Result<std::shared_ptr<const ViewerService::State>> ViewerService::Open(const Principal& who,
                                                                        const RepoId& id) {
  auto repo = deps_.repos.Open(who, id, Access::Read);
  if (!repo) {
    if (repo.error().code == ErrorCode::RepoNotFound ||
        repo.error().code == ErrorCode::Unauthorized)
      return who.anonymous
                 ? MakeError(ErrorCode::ExternalUnauthenticatedError,
                             "The dataset does not exist, or is not accessible without "
                             "authentication (private or gated). Please check the spelling of "
                             "the dataset name or retry with authentication.")
                 : MakeError(ErrorCode::ExternalAuthenticatedError,
                             "The dataset does not exist, or is not accessible with the current "
                             "credentials (private or gated). Please check the spelling of the "
                             "dataset name or retry with other authentication credentials.");
    return std::move(repo).error();
  }
  HANGAR_ASSIGN_OR_RETURN(auto state, LoadState(repo->record.id));
  const db::ViewerExport& e = state->export_row;
  if (e.source_commit.empty() || e.source_commit != repo->record.last_commit) {
    // Never exported, or the branch moved since (a push this process did not see):
    // queue it; the answer waits for it unless an export exists.
    if (deps_.queue && !repo->record.last_commit.empty() &&
        (e.source_commit.empty() || e.status == db::ExportStatus::Ready ||
         e.status == db::ExportStatus::Failed))
      deps_.queue->Enqueue(repo->record.id, false);
    if (e.source_commit.empty())
      return MakeError(ErrorCode::ResponseNotReady,
                       "The server is busier than usual and the response is not ready yet. "
                       "Please retry later.");
  }
  if (!e.viewer)
    return MakeError(ErrorCode::NotSupportedDisabledViewerError,
                     "The dataset viewer has been disabled on this dataset.");
  if (e.status == db::ExportStatus::Failed && !e.error_code.empty())
    return CachedError(e.error_code, e.error);
  return state;
}

Result<ViewerService::Split> ViewerService::FindSplit(const Principal& who, const RepoId& id,
                                                      const std::string& config,
                                                      const std::string& split) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  Split out{id, state};
  for (const auto& s : state->splits) {
    if (s.config == config && (s.split == split || s.split.empty())) {
      out.row = &s;
      break;
    }
  }
  if (!out.row) return MakeError(ErrorCode::ResponseNotFound, "Not found.");
  if (out.row->status == db::ExportStatus::Failed)
    return CachedError(out.row->error_code, out.row->error);
  if (!IsReady(*out.row))
    return MakeError(ErrorCode::ResponseNotReady,
                     "The response is not ready yet. Please retry later.");
  HANGAR_ASSIGN_OR_RETURN(out.files, Files(*state, *out.row));
  HANGAR_ASSIGN_OR_RETURN(out.columns, Schema(FilesKey(*state, *out.row), *out.files));
  return out;
}

void ViewerService::AfterExport(int64_t repo_id) {
  auto state = LoadState(repo_id);
  if (!state) return;
  for (const auto& row : (*state)->splits) {
    if (!IsReady(row) || row.split.empty()) continue;
    Split s{RepoId{}, *state, &row, nullptr, nullptr};
    auto files = Files(**state, row);
    if (!files) continue;
    s.files = *files;
    auto columns = Schema(FilesKey(**state, row), *s.files);
    if (!columns) continue;
    s.columns = *columns;
    for (const auto& f : *s.files) {
      auto path = LocalPath(f);
      if (!path) continue;
      duckdb::Query q(duckdb::Sql("SELECT 1 FROM read_parquet(?) LIMIT 0"), {*path});
      q.timeout = options_.query_timeout;
      (void)deps_.rows_engine.Run(q);  // a warm-up: a failure shows on the first read
    }
    SearchIndexSpec spec = SearchSpec(s);
    if (search_ && !spec.columns.empty()) search_->Prepare(spec);
  }
}

Result<std::shared_ptr<const std::vector<duckdb::Column>>> ViewerService::Schema(
    const std::string& key, const std::vector<db::ViewerFile>& files) {
  if (auto hit = schemas_.Get(key)) return *hit;
  if (files.empty())
    return MakeError(ErrorCode::UnexpectedError, "The split has no Parquet files.");
  HANGAR_ASSIGN_OR_RETURN(std::string path, LocalPath(files.front()));
  duckdb::Query q(duckdb::Sql("SELECT * FROM read_parquet(?) LIMIT 0"), {path});
  q.timeout = options_.query_timeout;
  auto result = deps_.rows_engine.Run(q);
  if (!result)
    return MakeError(ErrorCode::UnexpectedError,
                     "The Parquet export could not be read: " + result.error().message);
  auto out = std::make_shared<const std::vector<duckdb::Column>>(std::move(result->columns));
  schemas_.Put(key, out);
  return out;
}

Result<std::shared_ptr<const std::vector<db::ViewerFile>>> ViewerService::Files(
    const State& state, const db::ViewerSplit& split) {
  std::string key = FilesKey(state, split);
  if (auto hit = files_.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(
      auto files, deps_.store.ListFiles(state.export_row.repo_id, split.config, split.split));
  auto out = std::make_shared<const std::vector<db::ViewerFile>>(std::move(files));
  files_.Put(key, out);
  return out;
}

Result<ViewerAnswer> ViewerService::IsValid(const Principal& who, const RepoId& id,
                                            const std::string& config, const std::string& split) {
  auto state = Open(who, id);
  json::object flags{{"viewer", false},
                     {"preview", false},
                     {"search", false},
                     {"filter", false},
                     {"statistics", false}};
  if (!state) {
    // A dataset the viewer cannot show at all is still a 200 with every flag false.
    ErrorCode c = state.error().code;
    if (c == ErrorCode::ExternalUnauthenticatedError ||
        c == ErrorCode::ExternalAuthenticatedError || c == ErrorCode::ResponseNotReady)
      return std::move(state).error();
    return ViewerAnswer{std::move(flags), ""};
  }
  if (!config.empty() && !HasConfig(**state, config))
    return MakeError(ErrorCode::ResponseNotFound, "Not found.");
  for (const auto& s : (*state)->splits) {
    if ((!config.empty() && s.config != config) || (!split.empty() && s.split != split)) continue;
    if (!IsReady(s)) continue;
    bool text = false;
    for (const auto& c : ColumnsFromJson(s.columns_json))
      text |= IsIndexable(FeatureOf(c.sql_type));
    flags["viewer"] = flags["preview"] = flags["filter"] = flags["statistics"] = true;
    if (text) flags["search"] = true;
  }
  return ViewerAnswer{std::move(flags), (*state)->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Splits(const Principal& who, const RepoId& id,
                                           const std::string& config) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  std::string dataset = id.ns + "/" + id.name;
  if (!config.empty() && !HasConfig(*state, config))
    return MakeError(ErrorCode::ResponseNotFound, "Not found.");
  json::array splits;
  for (const auto& s : state->splits) {
    if (s.split.empty() || (!config.empty() && s.config != config)) continue;
    splits.push_back(json::object{{"dataset", dataset}, {"config", s.config}, {"split", s.split}});
  }
  json::object out{{"splits", std::move(splits)}};
  if (config.empty()) {
    PendingAndFailed(*state, dataset, out, true);
  } else {
    for (const auto& s : state->splits)
      if (s.config == config && s.split.empty()) return CachedError(s.error_code, s.error);
  }
  return ViewerAnswer{std::move(out), state->export_row.source_commit};
}

}  // namespace hangar::services::viewer

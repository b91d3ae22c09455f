// ViewerService: the export's files, the datasets info and the sizes of a dataset or
// config (viewer_service.h; dataset-viewer.md §4.7–4.9).

#include <optional>

#include "core/util.h"
#include "services/viewer/features.h"
#include "services/viewer/viewer_internal.h"

namespace hangar::services::viewer {
namespace json = boost::json;

namespace {

// The splits of one config when all of them are Ready; else the error a config-level
// answer gives: ResponseNotFound, the config's (or a split's) cached error, ResponseNotReady.
Result<std::vector<const db::ViewerSplit*>> ReadyConfig(const ViewerService::State& state,
                                                        const std::string& config) {
  std::vector<const db::ViewerSplit*> out;
  const db::ViewerSplit* waiting = nullptr;
  for (const auto& s : state.splits) {
    if (s.config != config) continue;
    if (s.status == db::ExportStatus::Failed) return CachedError(s.error_code, s.error);
    if (IsWaiting(s)) waiting = &s;
    out.push_back(&s);
  }
  if (out.empty()) return MakeError(ErrorCode::ResponseNotFound, "Not found.");
  if (waiting)
    return MakeError(ErrorCode::ResponseNotReady,
                     "The response is not ready yet. Please retry later.");
  return out;
}

// The configs whose splits are all Ready, in state order.
std::vector<std::string> ReadyConfigs(const ViewerService::State& state) {
  std::vector<std::string> out;
  for (const auto& config : ConfigNames(state))
    if (ReadyConfig(state, config)) out.push_back(config);
  return out;
}

// A figure that is null unless some split is partial: then the sum of the estimates
// (the exported rows of a split that is not partial).
json::value EstimatedRows(const std::vector<const db::ViewerSplit*>& splits) {
  bool partial = false;
  int64_t sum = 0;
  for (const auto* s : splits) {
    partial |= s->partial;
    sum += s->estimated_num_rows.value_or(s->num_rows);
  }
  return partial ? json::value(sum) : json::value(nullptr);
}

json::object InfoOf(const RepoId& id, const std::string& config,
                    const std::vector<const db::ViewerSplit*>& splits) {
  json::object split_infos;
  int64_t download = 0, memory = 0;
  for (const auto* s : splits) {
    split_infos[s->split] = json::object{{"name", s->split},
                                         {"num_bytes", s->num_bytes_memory},
                                         {"num_examples", s->num_rows},
                                         {"dataset_name", id.name}};
    download += s->num_bytes_original;
    memory += s->num_bytes_memory;
  }
  return json::object{
      {"description", ""},
      {"citation", ""},
      {"homepage", ""},
      {"license", ""},
      {"features", FeatureDict(ColumnsFromJson(splits.front()->columns_json))},
      {"builder_name", splits.front()->builder},
      {"dataset_name", id.name},
      {"config_name", config},
      {"version", json::object{{"version_str", "0.0.0"}, {"major", 0}, {"minor", 0}, {"patch", 0}}},
      {"splits", std::move(split_infos)},
      {"download_size", download},
      {"dataset_size", memory}};
}

json::object SplitSize(const std::string& dataset, const db::ViewerSplit& s) {
  return json::object{{"dataset", dataset},
                      {"config", s.config},
                      {"split", s.split},
                      {"num_bytes_parquet_files", s.num_bytes_parquet},
                      {"num_bytes_memory", s.num_bytes_memory},
                      {"num_rows", s.num_rows},
                      {"num_columns", s.num_columns},
                      {"estimated_num_rows", EstimatedRows({&s})}};
}

// The figures of a config or the dataset: the sums over `splits`.
json::object TotalSize(const std::string& dataset,
                       const std::vector<const db::ViewerSplit*>& splits) {
  int64_t original = 0, parquet = 0, memory = 0, rows = 0;
  for (const auto* s : splits) {
    original += s->num_bytes_original;
    parquet += s->num_bytes_parquet;
    memory += s->num_bytes_memory;
    rows += s->num_rows;
  }
  return json::object{{"dataset", dataset},
                      {"num_bytes_original_files", original},
                      {"num_bytes_parquet_files", parquet},
                      {"num_bytes_memory", memory},
                      {"num_rows", rows},
                      {"estimated_num_rows", EstimatedRows(splits)}};
}

}  // namespace

Result<ViewerAnswer> ViewerService::Parquet(const Principal& who, const RepoId& id,
                                            const std::string& config,
                                            const std::string& base_url) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  std::string dataset = id.ns + "/" + id.name;
  std::string prefix = base_url + "/datasets/" + PercentEncode(id.ns) + "/" +
                       PercentEncode(id.name) + "/resolve/refs%2Fconvert%2Fparquet/";
  std::vector<std::string> configs;
  if (config.empty()) {
    configs = ReadyConfigs(*state);
  } else {
    HANGAR_TRY(ReadyConfig(*state, config));
    configs = {config};
  }
  json::array files;
  for (const auto& s : state->splits) {
    if (std::find(configs.begin(), configs.end(), s.config) == configs.end()) continue;
    HANGAR_ASSIGN_OR_RETURN(auto list, Files(*state, s));
    for (const auto& f : *list)
      files.push_back(json::object{{"dataset", dataset},
                                   {"config", s.config},
                                   {"split", s.split},
                                   {"url", prefix + PercentEncode(f.path, true)},
                                   {"filename", f.path.substr(f.path.rfind('/') + 1)},
                                   {"size", f.size}});
  }
  json::object out{{"parquet_files", std::move(files)}};
  if (config.empty()) {
    PendingAndFailed(*state, dataset, out);
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto splits, ReadyConfig(*state, config));
    out["features"] = FeatureDict(ColumnsFromJson(splits.front()->columns_json));
  }
  out["partial"] = AnyPartial(*state, config);
  return ViewerAnswer{std::move(out), state->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Info(const Principal& who, const RepoId& id,
                                         const std::string& config) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  json::object out;
  if (!config.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto splits, ReadyConfig(*state, config));
    out["dataset_info"] = InfoOf(id, config, splits);
  } else {
    json::object infos;
    for (const auto& c : ReadyConfigs(*state)) infos[c] = InfoOf(id, c, *ReadyConfig(*state, c));
    out["dataset_info"] = std::move(infos);
    PendingAndFailed(*state, id.ns + "/" + id.name, out);
  }
  out["partial"] = AnyPartial(*state, config);
  return ViewerAnswer{std::move(out), state->export_row.source_commit};
}

Result<ViewerAnswer> ViewerService::Size(const Principal& who, const RepoId& id,
                                         const std::string& config) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  std::string dataset = id.ns + "/" + id.name;
  json::object size;
  json::array split_sizes;
  if (!config.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto splits, ReadyConfig(*state, config));
    json::object total = TotalSize(dataset, splits);
    total["config"] = config;
    total["num_columns"] = splits.front()->num_columns;
    size["config"] = std::move(total);
    for (const auto* s : splits) split_sizes.push_back(SplitSize(dataset, *s));
    size["splits"] = std::move(split_sizes);
    return ViewerAnswer{
        json::object{{"size", std::move(size)}, {"partial", AnyPartial(*state, config)}},
        state->export_row.source_commit};
  }
  std::vector<const db::ViewerSplit*> all;
  json::array config_sizes;
  for (const auto& c : ReadyConfigs(*state)) {
    auto splits = *ReadyConfig(*state, c);
    json::object total = TotalSize(dataset, splits);
    total["config"] = c;
    total["num_columns"] = splits.front()->num_columns;
    config_sizes.push_back(std::move(total));
    for (const auto* s : splits) split_sizes.push_back(SplitSize(dataset, *s));
    all.insert(all.end(), splits.begin(), splits.end());
  }
  size["dataset"] = TotalSize(dataset, all);
  size["configs"] = std::move(config_sizes);
  size["splits"] = std::move(split_sizes);
  json::object out{{"size", std::move(size)}};
  PendingAndFailed(*state, dataset, out);
  out["partial"] = AnyPartial(*state, "");
  return ViewerAnswer{std::move(out), state->export_row.source_commit};
}

}  // namespace hangar::services::viewer

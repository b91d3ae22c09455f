#pragma once
// What viewer_service.cc and viewer_rows.cc share (not part of the module's interface).

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "services/viewer/viewer_service.h"

namespace hangar::services::viewer {

// A split that a request named and may read.
struct ViewerService::Split {
  RepoId id;
  std::shared_ptr<const State> state;
  const db::ViewerSplit* row = nullptr;                        // into state->splits
  std::shared_ptr<const std::vector<duckdb::Column>> columns;  // of its export, as read
  std::shared_ptr<const std::vector<db::ViewerFile>> files;
};

bool IsReady(const db::ViewerSplit& s);
// Pending or Running.
bool IsWaiting(const db::ViewerSplit& s);
// The configs of `state` in its order, each once.
std::vector<std::string> ConfigNames(const ViewerService::State& state);
bool HasConfig(const ViewerService::State& state, const std::string& config);
// Sets `pending` and `failed` of a dataset-level answer (§4.7–4.9) in `out`: a config is
// pending while any of its splits waits, failed when it or a split of it failed. With
// `split_names` (§4.2, /splits) only a config whose split names could not be derived
// failed, and none is pending: the names are known once the export began.
void PendingAndFailed(const ViewerService::State& state, const std::string& dataset,
                      boost::json::object& out, bool split_names = false);
// Whether a Ready split of `config` (any config when "") is a partial export.
bool AnyPartial(const ViewerService::State& state, const std::string& config);

// One row of an answer (§4.4): {"row_idx", "row": {column: cell}, "truncated_cells": []},
// cells as the viewer's JSON (NaN and bytes null, nested values as JSON).
boost::json::object RowJson(int64_t row_idx, const std::vector<duckdb::Value>& cells,
                            const std::vector<duckdb::Column>& columns);

// The columns recorded by the export job ([{"name", "type"}]).
std::vector<duckdb::Column> ColumnsFromJson(const std::string& columns_json);

// The error a failed split or export answers: its recorded code, else UnexpectedError.
Error CachedError(const std::string& code, const std::string& message);

}  // namespace hangar::services::viewer

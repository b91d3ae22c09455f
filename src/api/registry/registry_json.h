#pragma once
// The registry's records as JSON (docs/registry.md): Hangar's own /api/v1 shapes, and
// MLflow's RegisteredModel / ModelVersion messages (model_registry.proto, as MLflow's
// server renders them: proto field names, versions as strings, unset fields left out).

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "services/registry/registry_service.h"

namespace hangar::api::registry {

// /api/v1: {name, owner, description, private, tags{}, aliases{alias: n}, created_by,
// created_at, updated_at} (times ISO 8601 UTC, to the millisecond).
boost::json::object ModelJson(const db::ModelRecord& m);
// /api/v1: {version, repo, repo_type, commit, uri "ns/name@sha", url (the commit's page
// under `base_url`), stage, aliases[], description, status, run_id, run_link, base_model
// {model_id, version} or null, datasets [{repo, commit}], tags{}, created_by, created_at,
// updated_at}.
boost::json::object VersionJson(const db::ModelRecord& m, const db::VersionRecord& v,
                                const std::string& base_url);

// MLflow ModelVersion.
boost::json::object MlflowVersion(const db::ModelRecord& m, const db::VersionRecord& v);
// MLflow RegisteredModel, with `latest` as latest_versions (one per stage).
boost::json::object MlflowModel(const db::ModelRecord& m,
                                const std::vector<db::VersionRecord>& latest);
// The artifact location MLflow clients are given for a version: the path of its pinned
// commit under the artifact proxy ("mlflow-artifacts:/models/<ns>/<name>/<commit>").
std::string ArtifactUri(const db::VersionRecord& v);

}  // namespace hangar::api::registry

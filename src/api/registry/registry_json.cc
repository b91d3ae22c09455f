#include "api/registry/registry_json.h"

#include "core/repo_id.h"
#include "core/util.h"
#include "services/registry/registry_service.h"

namespace hangar::api::registry {
namespace json = boost::json;

namespace {

std::string Time(int64_t unix_millis) { return Iso8601Millis(unix_millis); }

json::object TagObject(const std::map<std::string, std::string>& tags) {
  json::object out;
  for (const auto& [k, v] : tags) out[k] = v;
  return out;
}

// MLflow's repeated {key, value}.
json::array TagList(const std::map<std::string, std::string>& tags) {
  json::array out;
  for (const auto& [k, v] : tags) out.push_back(json::object{{"key", k}, {"value", v}});
  return out;
}

std::vector<std::string> AliasesOf(const db::ModelRecord& m, int64_t version) {
  std::vector<std::string> out;
  for (const auto& [alias, target] : m.aliases)
    if (target == version) out.push_back(alias);
  return out;
}

std::string RepoPath(const db::VersionRecord& v) {
  auto type = ParseRepoType(v.repo_type);
  return std::string(RepoUrlPrefix(type.value_or(RepoType::Model))) + v.repo;
}

}  // namespace

json::object ModelJson(const db::ModelRecord& m) {
  json::object aliases;
  for (const auto& [alias, version] : m.aliases) aliases[alias] = version;
  return json::object{{"name", m.name},
                      {"owner", m.owner},
                      {"description", m.description},
                      {"private", m.is_private || m.pins_private},
                      {"tags", TagObject(m.tags)},
                      {"aliases", std::move(aliases)},
                      {"created_by", m.created_by_name},
                      {"created_at", Time(m.created_at)},
                      {"updated_at", Time(m.updated_at)}};
}

json::object VersionJson(const db::ModelRecord& m, const db::VersionRecord& v,
                         const std::string& base_url) {
  json::array aliases, datasets;
  for (auto& a : AliasesOf(m, v.version)) aliases.push_back(json::string(a));
  for (const auto& d : v.datasets)
    datasets.push_back(json::object{{"repo", d.repo}, {"commit", d.commit}});
  json::value base = nullptr;
  if (v.base_model_id != 0)
    base = json::object{{"model_id", v.base_model_id}, {"version", v.base_version}};
  return json::object{{"model", m.name},
                      {"version", v.version},
                      {"repo", v.repo},
                      {"repo_type", v.repo_type},
                      {"commit", v.commit},
                      {"uri", v.repo + "@" + v.commit},
                      {"url", base_url + "/" + RepoPath(v) + "/tree/" + v.commit},
                      {"stage", services::StageName(services::StageOf(m, v))},
                      {"aliases", std::move(aliases)},
                      {"description", v.description},
                      {"status", v.status},
                      {"run_id", v.run_id},
                      {"run_link", v.run_link},
                      {"base_model", std::move(base)},
                      {"datasets", std::move(datasets)},
                      {"tags", TagObject(v.tags)},
                      {"created_by", v.created_by_name},
                      {"created_at", Time(v.created_at)},
                      {"updated_at", Time(v.updated_at)}};
}

std::string ArtifactUri(const db::VersionRecord& v) {
  auto type = ParseRepoType(v.repo_type).value_or(RepoType::Model);
  return "mlflow-artifacts:/" + std::string(RepoCollection(type)) + "/" + v.repo + "/" + v.commit;
}

json::object MlflowVersion(const db::ModelRecord& m, const db::VersionRecord& v) {
  json::object out{{"name", m.name},
                   {"version", std::to_string(v.version)},
                   {"creation_timestamp", v.created_at},
                   {"last_updated_timestamp", v.updated_at},
                   {"current_stage", services::StageName(services::StageOf(m, v))},
                   {"description", v.description},
                   {"source", ArtifactUri(v)},
                   {"status", v.status}};
  if (!v.created_by_name.empty()) out["user_id"] = v.created_by_name;  // MLflow: a user name
  if (!v.run_id.empty()) out["run_id"] = v.run_id;
  if (!v.run_link.empty()) out["run_link"] = v.run_link;
  if (!v.status_message.empty()) out["status_message"] = v.status_message;
  if (!v.tags.empty()) out["tags"] = TagList(v.tags);
  json::array aliases;
  for (auto& a : AliasesOf(m, v.version)) aliases.push_back(json::string(a));
  if (!aliases.empty()) out["aliases"] = std::move(aliases);
  return out;
}

json::object MlflowModel(const db::ModelRecord& m, const std::vector<db::VersionRecord>& latest) {
  json::object out{{"name", m.name},
                   {"creation_timestamp", m.created_at},
                   {"last_updated_timestamp", m.updated_at},
                   {"description", m.description}};
  if (!m.created_by_name.empty()) out["user_id"] = m.created_by_name;
  json::array versions, aliases;
  for (const auto& v : latest) versions.push_back(MlflowVersion(m, v));
  for (const auto& [alias, version] : m.aliases)
    aliases.push_back(json::object{{"alias", alias}, {"version", std::to_string(version)}});
  if (!versions.empty()) out["latest_versions"] = std::move(versions);
  if (!m.tags.empty()) out["tags"] = TagList(m.tags);
  if (!aliases.empty()) out["aliases"] = std::move(aliases);
  return out;
}

}  // namespace hangar::api::registry

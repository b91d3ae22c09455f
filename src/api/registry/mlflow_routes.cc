// MLflow's Model Registry REST API (mlflow/protos/model_registry.proto, the 2.0 endpoints)
// over RegistryService: GET calls take query parameters, the others a JSON body; versions
// are strings; errors are {error_code, message} with MLflow's statuses (ApiFamily::Mlflow
// in error_render.cc). Legacy stages map onto aliases (registry_service.h). docs/registry.md
// §MLflow lists what is supported of the search filters and orders.

#include "api/json_util.h"
#include "api/registry/mlflow_common.h"
#include "api/registry/mlflow_filter.h"
#include "api/registry/registry_json.h"
#include "api/registry/registry_params.h"
#include "api/registry/registry_routes.h"
#include "core/util.h"

namespace hangar::api::registry {
namespace {

namespace json = boost::json;
using http::Method;
using http::Request;
using http::Requirement;
using http::Response;
using services::RegistryService;

Response Ok(json::object body = {}) { return JsonResponse(body); }

// MLflow's JSON leaves an empty repeated field out.
void SetList(json::object& out, std::string_view key, json::array items) {
  if (!items.empty()) out[key] = std::move(items);
}

Result<int64_t> VersionParam(const json::object& in) {
  HANGAR_ASSIGN_OR_RETURN(std::string text, Required(in, "version"));
  return VersionNumber(text);
}

Error Unsupported(const FilterCondition& c) {
  return MakeError(ErrorCode::BadRequest,
                   "Invalid filter: '" + c.field + (c.tag.empty() ? "" : "." + c.tag) + " " + c.op +
                       "' is not supported here (docs/registry.md §MLflow).");
}

// The filter's conditions, at most one a field (a second would narrow nothing here: one
// tag condition is what the stores take). Errors: BadRequest.
Result<std::vector<FilterCondition>> Conditions(const json::object& in) {
  HANGAR_ASSIGN_OR_RETURN(std::string filter, StringField(in, "filter"));
  HANGAR_ASSIGN_OR_RETURN(auto conditions, ParseMlflowFilter(filter));
  for (size_t i = 0; i < conditions.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (conditions[i].field == conditions[j].field)
        return MakeError(ErrorCode::BadRequest, "Invalid filter: only one condition on '" +
                                                    conditions[i].field + "' is supported.");
  return conditions;
}

// ---- registered-models ----

Result<Response> CreateModel(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  services::NewModel m;
  HANGAR_ASSIGN_OR_RETURN(m.name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(m.description, StringField(in, "description"));
  HANGAR_ASSIGN_OR_RETURN(m.tags, KeyValueListField(in, "tags"));
  HANGAR_TRY(r.CreateModel(q.principal, m));
  HANGAR_ASSIGN_OR_RETURN(auto out, RegisteredModel(r, q.principal, m.name));
  return Ok({{"registered_model", std::move(out)}});
}

Result<Response> GetModel(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(auto out, RegisteredModel(r, q.principal, name));
  return Ok({{"registered_model", std::move(out)}});
}

// update (description) and rename (new_name).
Result<Response> UpdateModel(RegistryService& r, Request& q, bool rename) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  std::optional<std::string> description, new_name;
  if (rename) {
    HANGAR_ASSIGN_OR_RETURN(new_name, Required(in, "new_name"));
  } else {
    HANGAR_ASSIGN_OR_RETURN(description, OptionalString(in, "description"));
  }
  HANGAR_ASSIGN_OR_RETURN(auto m, r.UpdateModel(q.principal, name, description, new_name));
  HANGAR_ASSIGN_OR_RETURN(auto out, RegisteredModel(r, q.principal, m.name));
  return Ok({{"registered_model", std::move(out)}});
}

Result<Response> DeleteModel(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_TRY(r.DeleteModel(q.principal, name));
  return Ok();
}

Result<Response> SearchModels(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  services::ModelFilter f;
  HANGAR_ASSIGN_OR_RETURN(f.limit, MaxResults(in, 100, 1000));
  HANGAR_ASSIGN_OR_RETURN(f.offset, PageOffset(in));
  HANGAR_ASSIGN_OR_RETURN(auto conditions, Conditions(in));
  for (const auto& c : conditions) {
    if (c.field == "name" && c.value.empty()) return Ok();  // no model has an empty name
    if (c.field == "name" && c.op == "=") {
      f.name = c.value;
    } else if (c.field == "name" && (c.op == "LIKE" || c.op == "ILIKE")) {
      f.like = c.value;
    } else if (c.field == "tags" && c.op == "=") {
      f.tag_key = c.tag;
      f.tag_value = c.value;
    } else {
      return Unsupported(c);
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto orders, StringsOf(in, "order_by"));
  for (const auto& o : orders) {
    std::string order = AsciiLower(std::string(TrimBlanks(o)));
    if (order == "last_updated_timestamp desc" || order == "timestamp desc")
      f.newest_first = true;
    else if (order != "name" && order != "name asc")
      return MakeError(ErrorCode::BadRequest, "Invalid order_by '" + o.substr(0, 100) +
                                                  "': name ASC or last_updated_timestamp DESC");
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListModels(q.principal, f));
  json::array models;
  for (const auto& m : page.models) {
    HANGAR_ASSIGN_OR_RETURN(auto latest, r.LatestVersions(q.principal, m.name, {}));
    models.push_back(MlflowModel(m, latest));
  }
  json::object out;
  SetList(out, "registered_models", std::move(models));
  SetNextToken(out, page.next_offset);
  return Ok(std::move(out));
}

Result<Response> LatestVersions(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(auto names, StringsOf(in, "stages"));
  std::vector<services::Stage> stages;
  for (const auto& s : names) {
    auto stage = services::ParseStage(s);
    if (!stage)
      return MakeError(ErrorCode::BadRequest, "Invalid Model Version stage: " + s.substr(0, 60) +
                                                  ". Value must be one of None, Staging, "
                                                  "Production, Archived.");
    stages.push_back(*stage);
  }
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(q.principal, name));
  HANGAR_ASSIGN_OR_RETURN(auto latest, r.LatestVersions(q.principal, name, stages));
  json::array versions;
  for (const auto& v : latest) versions.push_back(MlflowVersion(m, v));
  json::object out;
  SetList(out, "model_versions", std::move(versions));
  return Ok(std::move(out));
}

// set-tag (value given) and delete-tag, on a model or (with_version) a version.
Result<Response> Tag(RegistryService& r, Request& q, bool with_version, bool remove) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(std::string key, Required(in, "key"));
  std::optional<std::string> value;
  if (!remove) {
    HANGAR_ASSIGN_OR_RETURN(value, OptionalString(in, "value"));
    if (!value)
      return MakeError(ErrorCode::BadRequest, "Missing value for required parameter 'value'.");
  }
  if (with_version) {
    HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
    HANGAR_TRY(r.SetVersionTag(q.principal, name, version, key, value));
  } else {
    HANGAR_TRY(r.SetModelTag(q.principal, name, key, value));
  }
  return Ok();
}

Result<Response> Alias(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(std::string alias, Required(in, "alias"));
  if (q.method == Method::Get) {
    HANGAR_ASSIGN_OR_RETURN(auto v, r.VersionByAlias(q.principal, name, alias));
    HANGAR_ASSIGN_OR_RETURN(auto out, ModelVersion(r, q.principal, name, v.version));
    return Ok({{"model_version", std::move(out)}});
  }
  std::optional<int64_t> version;
  if (q.method == Method::Post) {
    HANGAR_ASSIGN_OR_RETURN(version, VersionParam(in));
  }
  HANGAR_TRY(r.MoveAlias(q.principal, name, alias, version));
  return Ok();
}

// ---- model-versions ----

Result<Response> CreateVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(std::string source, Required(in, "source"));
  HANGAR_ASSIGN_OR_RETURN(services::NewVersion v, ParseSource(source));
  HANGAR_ASSIGN_OR_RETURN(v.run_id, StringField(in, "run_id"));
  HANGAR_ASSIGN_OR_RETURN(v.run_link, StringField(in, "run_link"));
  HANGAR_ASSIGN_OR_RETURN(v.description, StringField(in, "description"));
  HANGAR_ASSIGN_OR_RETURN(v.tags, KeyValueListField(in, "tags"));
  HANGAR_ASSIGN_OR_RETURN(auto done, r.RegisterVersion(q.principal, name, v));
  return Ok({{"model_version", MlflowVersion(done.first, done.second)}});
}

Result<Response> GetVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
  HANGAR_ASSIGN_OR_RETURN(auto out, ModelVersion(r, q.principal, name, version));
  return Ok({{"model_version", std::move(out)}});
}

Result<Response> UpdateVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
  HANGAR_ASSIGN_OR_RETURN(std::string description, StringField(in, "description"));
  HANGAR_TRY(r.UpdateVersion(q.principal, name, version, description));
  HANGAR_ASSIGN_OR_RETURN(auto out, ModelVersion(r, q.principal, name, version));
  return Ok({{"model_version", std::move(out)}});
}

Result<Response> DeleteVersion(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
  HANGAR_TRY(r.DeleteVersion(q.principal, name, version));
  return Ok();
}

Result<Response> SearchVersions(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  services::VersionFilter f;
  HANGAR_ASSIGN_OR_RETURN(f.limit, MaxResults(in, 10000, 10000));
  HANGAR_ASSIGN_OR_RETURN(f.offset, PageOffset(in));
  HANGAR_ASSIGN_OR_RETURN(auto conditions, Conditions(in));
  for (const auto& c : conditions) {
    if (c.op != "=") return Unsupported(c);
    if (c.field == "name" && c.value.empty()) return Ok();  // no model has an empty name
    if (c.field == "name") {
      f.name = c.value;
    } else if (c.field == "run_id") {
      f.run_id = c.value;
    } else if (c.field == "tags") {
      f.tag_key = c.tag;
      f.tag_value = c.value;
    } else {
      return Unsupported(c);
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListVersions(q.principal, f));
  json::array versions;
  for (const auto& v : page.versions)
    versions.push_back(MlflowVersion(page.models.at(v.model_id), v));
  json::object out;
  SetList(out, "model_versions", std::move(versions));
  SetNextToken(out, page.next_offset);
  return Ok(std::move(out));
}

Result<Response> DownloadUri(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
  HANGAR_ASSIGN_OR_RETURN(auto v, r.GetVersion(q.principal, name, version));
  return Ok({{"artifact_uri", ArtifactUri(v)}});
}

Result<Response> TransitionStage(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto in, Input(q));
  HANGAR_ASSIGN_OR_RETURN(std::string name, Required(in, "name"));
  HANGAR_ASSIGN_OR_RETURN(int64_t version, VersionParam(in));
  HANGAR_ASSIGN_OR_RETURN(std::string stage_name, Required(in, "stage"));
  auto stage = services::ParseStage(stage_name);
  if (!stage)
    return MakeError(ErrorCode::BadRequest,
                     "Invalid Model Version stage: " + stage_name.substr(0, 60) +
                         ". Value must be one of None, Staging, "
                         "Production, Archived.");
  const json::value* archive = in.if_contains("archive_existing_versions");
  if (!archive || !archive->is_bool())
    return MakeError(ErrorCode::BadRequest,
                     "Missing value for required parameter 'archive_existing_versions'.");
  HANGAR_TRY(r.TransitionStage(q.principal, name, version, *stage, archive->as_bool()));
  HANGAR_ASSIGN_OR_RETURN(auto out, ModelVersion(r, q.principal, name, version));
  return Ok({{"model_version", std::move(out)}});
}

// ---- mlflow-artifacts (the artifact proxy, read-only) ----

// GET …/artifacts?path=: the entries directly under `path` as {path: basename, is_dir,
// file_size}. A file or a missing path lists nothing, as MLflow's own repositories do: its
// client tells a file from a directory by an empty listing.
Result<Response> ListArtifacts(RegistryService& r, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(auto at, r.Artifact(q.principal, q.Query("path").value_or("")));
  auto entries = r.ListArtifacts(at);
  if (!entries && entries.error().code == ErrorCode::EntryNotFound) return Ok();
  if (!entries) return std::move(entries).error();
  json::array files;
  for (const auto& e : **entries) {
    std::string_view path = e.git.path;
    json::object f{{"path", path.substr(path.rfind('/') + 1)}, {"is_dir", e.git.is_dir}};
    if (!e.git.is_dir) f["file_size"] = e.Size();
    files.push_back(std::move(f));
  }
  json::object out;
  SetList(out, "files", std::move(files));
  return Ok(std::move(out));
}

// GET …/artifacts/<path>: the file's bytes, streamed.
Result<Response> DownloadArtifact(RegistryService& r, Request& q) {
  bool ok = true;
  std::string path = PercentDecode(q.Param("path"), &ok);
  if (!ok) return MakeError(ErrorCode::BadRequest, "the artifact path is not percent-encoded");
  HANGAR_ASSIGN_OR_RETURN(auto at, r.Artifact(q.principal, path));
  HANGAR_ASSIGN_OR_RETURN(auto file, r.OpenArtifact(at));
  Response res = Response::Stream(200, std::move(file.second));
  res.SetHeader("X-Content-Type-Options", "nosniff");
  return res;
}

}  // namespace

void AddMlflowRoutes(http::Router& router, RegistryService& r) {
  router.Add(Method::Get, "/api/2.0/mlflow-artifacts/artifacts", http::ApiFamily::Mlflow,
             Requirement::Public(), [&r](Request& q) { return ListArtifacts(r, q); });
  router.Add(Method::Get, "/api/2.0/mlflow-artifacts/artifacts/{path*}", http::ApiFamily::Mlflow,
             Requirement::Public(), [&r](Request& q) { return DownloadArtifact(r, q); });
  // Writes are checked from the head: the caller, then the body's declared length.
  const Requirement write = Requirement::WriteRole().Also(
      [](Request& q) { return CheckDeclaredLength(q, kMaxRegistryBody); });
  auto add = [&](Method m, const std::string& path, bool writes,
                 std::function<Result<Response>(RegistryService&, Request&)> h) {
    router.Add(m, "/api/2.0/mlflow/" + path, http::ApiFamily::Mlflow,
               writes ? write : Requirement::Public(),
               [&r, h = std::move(h)](Request& q) { return h(r, q); });
  };
  using namespace std::placeholders;
  add(Method::Post, "registered-models/create", true, CreateModel);
  add(Method::Get, "registered-models/get", false, GetModel);
  add(Method::Patch, "registered-models/update", true, std::bind(UpdateModel, _1, _2, false));
  add(Method::Post, "registered-models/rename", true, std::bind(UpdateModel, _1, _2, true));
  add(Method::Delete, "registered-models/delete", true, DeleteModel);
  add(Method::Get, "registered-models/search", false, SearchModels);
  add(Method::Get, "registered-models/get-latest-versions", false, LatestVersions);
  add(Method::Post, "registered-models/get-latest-versions", false, LatestVersions);
  add(Method::Post, "registered-models/set-tag", true, std::bind(Tag, _1, _2, false, false));
  add(Method::Delete, "registered-models/delete-tag", true, std::bind(Tag, _1, _2, false, true));
  add(Method::Post, "registered-models/alias", true, Alias);
  add(Method::Delete, "registered-models/alias", true, Alias);
  add(Method::Get, "registered-models/alias", false, Alias);
  add(Method::Post, "model-versions/create", true, CreateVersion);
  add(Method::Get, "model-versions/get", false, GetVersion);
  add(Method::Patch, "model-versions/update", true, UpdateVersion);
  add(Method::Delete, "model-versions/delete", true, DeleteVersion);
  add(Method::Get, "model-versions/search", false, SearchVersions);
  add(Method::Get, "model-versions/get-download-uri", false, DownloadUri);
  add(Method::Post, "model-versions/transition-stage", true, TransitionStage);
  add(Method::Post, "model-versions/set-tag", true, std::bind(Tag, _1, _2, true, false));
  add(Method::Delete, "model-versions/delete-tag", true, std::bind(Tag, _1, _2, true, true));
  // Anything else under the prefix is MLflow's ENDPOINT_NOT_FOUND, in MLflow's shape.
  for (Method m : {Method::Get, Method::Post, Method::Put, Method::Patch, Method::Delete})
    router.Add(m, "/api/2.0/mlflow/{rest*}", http::ApiFamily::Mlflow, Requirement::Public(),
               [](Request& q) -> Result<Response> {
                 return MakeError(ErrorCode::MethodNotAllowed,
                                  "No MLflow endpoint " +
                                      std::string(q.Param("rest")).substr(0, 200) +
                                      " for this method.");
               });
}

}  // namespace hangar::api::registry

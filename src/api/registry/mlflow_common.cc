#include "api/registry/mlflow_common.h"

#include <algorithm>

#include "api/json_util.h"
#include "api/registry/registry_json.h"
#include "api/registry/registry_params.h"
#include "core/base64.h"
#include "core/util.h"

namespace hangar::api::registry {

namespace json = boost::json;
using http::Method;
using http::Request;
using services::RegistryService;

Result<json::object> Input(Request& q) {
  if (q.method != Method::Get && q.method != Method::Head) {
    if (q.DeclaredBodyLength() == 0u) return json::object{};
    return ReadJsonObject(q, kMaxRegistryBody);
  }
  json::object out;
  for (const char* key : {"name", "new_name", "version", "alias", "key", "filter", "max_results",
                          "page_token", "stages", "order_by"}) {
    auto all = q.QueryAll(key);
    bool list = std::string_view(key) == "stages" || std::string_view(key) == "order_by";
    if (!list && all.size() > 1)
      return MakeError(ErrorCode::BadRequest,
                       "Parameter '" + std::string(key) + "' is given more than once.");
    if (!list && all.size() == 1) {
      out[key] = all.front();
    } else if (!all.empty()) {
      json::array items;
      for (auto& v : all) items.push_back(json::string(v));
      out[key] = std::move(items);
    }
  }
  return out;
}

Result<std::string> Required(const json::object& in, std::string_view key) {
  HANGAR_ASSIGN_OR_RETURN(std::string v, StringField(in, key));
  if (v.empty())
    return MakeError(ErrorCode::BadRequest,
                     "Missing value for required parameter '" + std::string(key) + "'.");
  return v;
}

Result<int64_t> MaxResults(const json::object& in, int64_t fallback, int64_t cap) {
  const json::value* v = in.if_contains("max_results");
  if (!v || v->is_null()) return fallback;
  std::optional<uint64_t> n;
  if (v->is_int64() && v->as_int64() > 0) n = static_cast<uint64_t>(v->as_int64());
  if (v->is_string()) n = ParseUint64(v->as_string());
  if (!n || *n == 0 || *n > static_cast<uint64_t>(cap))
    return MakeError(ErrorCode::BadRequest, "Invalid value for max_results: it must be at most " +
                                                std::to_string(cap) + " and positive.");
  return static_cast<int64_t>(*n);
}

// The token is base64 of the offset's digits.
Result<int64_t> PageOffset(const json::object& in) {
  HANGAR_ASSIGN_OR_RETURN(std::string token, StringField(in, "page_token"));
  if (token.empty()) return 0;
  auto digits = Base64Decode(token);
  auto n = digits ? ParseUint64(*digits) : std::nullopt;
  if (!n || *n > static_cast<uint64_t>(INT64_MAX / 2))
    return MakeError(ErrorCode::BadRequest, "Invalid page token.");
  return static_cast<int64_t>(*n);
}

void SetNextToken(json::object& out, int64_t next_offset) {
  if (next_offset) out["next_page_token"] = Base64Encode(std::to_string(next_offset));
}

Result<std::vector<std::string>> StringsOf(const json::object& in, std::string_view key) {
  const json::value* v = in.if_contains(key);
  if (v && v->is_string()) return std::vector<std::string>{std::string(v->as_string())};
  return StringListField(in, key);
}

Result<json::object> RegisteredModel(RegistryService& r, const Principal& who,
                                     const std::string& name) {
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(who, name));
  HANGAR_ASSIGN_OR_RETURN(auto latest, r.LatestVersions(who, name, {}));
  return MlflowModel(m, latest);
}

Result<json::object> ModelVersion(RegistryService& r, const Principal& who, const std::string& name,
                                  int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(auto v, r.GetVersion(who, name, version));
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(who, name));
  return MlflowVersion(m, v);
}

Result<services::NewVersion> ParseSource(const std::string& source) {
  services::NewVersion v;
  std::string_view s = source;
  bool artifacts = false;
  if (s.rfind("mlflow-artifacts:/", 0) == 0) {
    s.remove_prefix(18);
    artifacts = true;
  } else if (s.rfind("hf://", 0) == 0) {
    s.remove_prefix(5);
  }
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    std::string prefix = std::string(RepoCollection(t)) + "/";
    if (s.rfind(prefix, 0) == 0) {
      s.remove_prefix(prefix.size());
      v.repo_type = t;
      break;
    }
  }
  std::string rest(s);
  if (artifacts) {
    // ns/name/<commit>: the last part is the revision.
    size_t last = rest.rfind('/');
    if (last == std::string::npos || std::count(rest.begin(), rest.end(), '/') != 2)
      return MakeError(ErrorCode::BadRequest,
                       "source '" + source.substr(0, 200) + "' is not an artifact URI of this hub");
    v.revision = rest.substr(last + 1);
    rest.resize(last);
  } else if (size_t at = rest.find('@'); at != std::string::npos) {
    v.revision = rest.substr(at + 1);
    rest.resize(at);
  }
  if (std::count(rest.begin(), rest.end(), '/') != 1)
    return MakeError(ErrorCode::BadRequest,
                     "source must name a repo of this hub, \"namespace/name@revision\", not '" +
                         source.substr(0, 200) + "'");
  v.repo = std::move(rest);
  return v;
}

}  // namespace hangar::api::registry

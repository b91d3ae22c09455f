#include "api/hf/hf_common.h"

#include <algorithm>
#include <span>
#include <vector>

#include "api/json_util.h"
#include "core/repo_path.h"
#include "core/util.h"

namespace hangar::api {

boost::json::value GatedJson(std::string_view gated) {
  if (gated.empty()) return false;
  return boost::json::string(gated);
}

namespace {

// The expand keys the clients send per type (hf-api.md §3.2; huggingface_hub's
// Expand*Property_T, @huggingface/hub's *_EXPANDABLE_KEYS, older Python's xetEnabled).
constexpr std::string_view kModelKeys[] = {"author",
                                           "baseModels",
                                           "cardData",
                                           "childrenModelCount",
                                           "config",
                                           "createdAt",
                                           "disabled",
                                           "downloads",
                                           "downloadsAllTime",
                                           "evalResults",
                                           "gated",
                                           "gguf",
                                           "gitalyUid",
                                           "inference",
                                           "inferenceProviderMapping",
                                           "lastModified",
                                           "library_name",
                                           "likes",
                                           "mask_token",
                                           "model-index",
                                           "pipeline_tag",
                                           "private",
                                           "resourceGroup",
                                           "safetensors",
                                           "sha",
                                           "siblings",
                                           "spaces",
                                           "tags",
                                           "transformersInfo",
                                           "trendingScore",
                                           "usedStorage",
                                           "widgetData",
                                           "xetEnabled"};
constexpr std::string_view kDatasetKeys[] = {
    "author",    "cardData",          "citation",    "createdAt",     "description",  "disabled",
    "downloads", "downloadsAllTime",  "gated",       "gitalyUid",     "lastModified", "likes",
    "mainSize",  "paperswithcode_id", "private",     "resourceGroup", "sha",          "siblings",
    "tags",      "trendingScore",     "usedStorage", "xetEnabled"};
constexpr std::string_view kSpaceKeys[] = {
    "author", "cardData", "createdAt", "datasets", "disabled",      "gitalyUid",   "lastModified",
    "likes",  "models",   "private",   "region",   "resourceGroup", "runtime",     "sdk",
    "sha",    "siblings", "subdomain", "tags",     "trendingScore", "usedStorage", "xetEnabled"};

std::span<const std::string_view> KnownExpandKeys(RepoType type) {
  switch (type) {
    case RepoType::Dataset:
      return kDatasetKeys;
    case RepoType::Space:
      return kSpaceKeys;
    case RepoType::Model:
      break;
  }
  return kModelKeys;
}

}  // namespace

Result<std::vector<std::string>> ExpandValues(const http::Request& req,
                                              std::span<const std::string_view> known,
                                              std::string_view what) {
  std::vector<std::string> keys;
  for (const char* name : {"expand", "expand[]"}) {
    for (auto& key : req.QueryAll(name)) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return MakeError(ErrorCode::BadRequest, "unknown expand key '" + key.substr(0, 100) +
                                                    "' for " + std::string(what));
      }
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
  }
  return keys;
}

Result<std::vector<std::string>> ExpandKeys(const http::Request& req, RepoType type) {
  return ExpandValues(req, KnownExpandKeys(type),
                      "a " + std::string(RepoTypeName(type)) + " (hf-api.md §3.2 lists them)");
}

void KeepExpanded(boost::json::object& o, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  boost::json::object kept;
  for (std::string_view k : {std::string_view("_id"), std::string_view("id")}) {
    if (auto* v = o.if_contains(k)) kept[k] = std::move(*v);
  }
  for (const auto& k : keys) {
    if (auto* v = o.if_contains(k)) kept[k] = std::move(*v);
  }
  o = std::move(kept);
}

Result<RepoId> RepoFromParams(const http::Request& req, RepoType type) {
  std::string ns = PercentDecode(req.Param("ns"));
  std::string name = PercentDecode(req.Param("name"));
  return RepoId::Parse(type, ns, name);
}

// `type` of a create/delete/move body: absent → model (hf-api.md §6.1).
Result<RepoType> TypeFromBody(const boost::json::object& body) {
  HANGAR_ASSIGN_OR_RETURN(auto name, StringField(body, "type"));
  if (name.empty()) return RepoType::Model;
  auto t = ParseRepoType(name);
  if (!t) return MakeError(ErrorCode::BadRequest, "unknown repo type '" + name + "'");
  return *t;
}

// {"name", "organization", "type"} as create and delete send them; organization null →
// the caller's own namespace (hf-api.md §6.1).
Result<RepoId> RepoFromBody(const boost::json::object& body, const Principal& who) {
  HANGAR_ASSIGN_OR_RETURN(auto name, StringField(body, "name"));
  HANGAR_ASSIGN_OR_RETURN(auto org, StringField(body, "organization"));
  HANGAR_ASSIGN_OR_RETURN(auto type, TypeFromBody(body));
  std::string ns = org;
  std::string repo_name = name;
  if (ns.empty()) {
    size_t slash = repo_name.find('/');
    if (slash != std::string::npos) {  // "ns/name" in `name`
      ns = repo_name.substr(0, slash);
      repo_name = repo_name.substr(slash + 1);
    } else {
      if (who.anonymous) {
        return MakeError(ErrorCode::Unauthorized, "authentication required");
      }
      ns = who.name;
    }
  }
  return RepoId::Parse(type, ns, repo_name);
}

Result<RevisionAndPath> SplitRevisionAndPath(std::string_view raw) {
  std::vector<std::string_view> segs;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t end = raw.find('/', start);
    if (end == std::string_view::npos) end = raw.size();
    segs.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  RevisionAndPath out;
  size_t used = 1;
  auto all_digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (segs.size() >= 3 && segs[0] == "refs" &&
      ((segs[1] == "pr" && all_digits(segs[2])) || (segs[1] == "convert" && !segs[2].empty()))) {
    out.revision = "refs/" + std::string(segs[1]) + "/" + std::string(segs[2]);
    used = 3;
  } else {
    out.revision = PercentDecode(segs[0]);
  }
  if (out.revision.empty()) {
    return MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: (empty)");
  }
  for (size_t i = used; i < segs.size(); ++i) {
    if (i == segs.size() - 1 && segs[i].empty() && i > used) break;  // trailing '/'
    if (i > used) out.path += '/';
    out.path += PercentDecode(segs[i]);
  }
  if (!out.path.empty()) {
    // A decoded segment may itself hold '/' (Python sends tree paths as one segment).
    HANGAR_TRY(ValidateReadPath(out.path));
  }
  return out;
}

}  // namespace hangar::api

// The dataset viewer API (viewer_routes.h): parameters as dataset-viewer.md §2 reads them,
// one ViewerService call, the answer with its revision and caching headers.

#include "api/viewer/viewer_routes.h"

#include <boost/json.hpp>

#include <charconv>

#include "api/hf/hf_common.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Response;
using services::viewer::ViewerAnswer;
using services::viewer::ViewerService;

constexpr int64_t kMaxLength = 100;

// A query parameter trimmed of blanks; "" when absent or blank (§2.1 "non-blank").
std::string Param(const Request& q, std::string_view key) {
  auto v = q.Query(key);
  return v ? std::string(TrimBlanks(*v)) : std::string();
}

Error Missing(std::string_view message) {
  return MakeError(ErrorCode::MissingRequiredParameter, std::string(message));
}

// The dataset parameter, "<ns>/<name>". A name no repo can have answers as a dataset that
// is not there, in the caller's words (§1: existence is never revealed otherwise).
Result<RepoId> DatasetParam(const Request& q) {
  std::string dataset = Param(q, "dataset");
  if (dataset.empty()) return Missing("Parameter 'dataset' is required");
  size_t slash = dataset.find('/');
  Result<RepoId> id = MakeError(ErrorCode::BadRequest, "");
  if (slash != std::string::npos)
    id = RepoId::Parse(RepoType::Dataset, dataset.substr(0, slash), dataset.substr(slash + 1));
  if (id) return id;
  return q.principal.anonymous
             ? MakeError(ErrorCode::ExternalUnauthenticatedError,
                         "The dataset does not exist, or is not accessible without "
                         "authentication (private or gated). Please check the spelling of the "
                         "dataset name or retry with authentication.")
             : MakeError(ErrorCode::ExternalAuthenticatedError,
                         "The dataset does not exist, or is not accessible with the current "
                         "credentials (private or gated). Please check the spelling of the "
                         "dataset name or retry with other authentication credentials.");
}

struct SplitParams {
  RepoId id;
  std::string config, split;
};

// dataset, config and split, all required.
Result<SplitParams> SplitLevel(const Request& q) {
  if (Param(q, "dataset").empty() || Param(q, "config").empty() || Param(q, "split").empty())
    return Missing("Parameters 'dataset', 'config' and 'split' are required");
  HANGAR_ASSIGN_OR_RETURN(RepoId id, DatasetParam(q));
  return SplitParams{std::move(id), Param(q, "config"), Param(q, "split")};
}

// An integer parameter of §2.2: `fallback` when absent, else ≥ 0 (and ≤ `max` when given).
Result<int64_t> Count(const Request& q, std::string_view key, int64_t fallback,
                      std::optional<int64_t> max) {
  auto raw = q.Query(key);
  if (!raw) return fallback;
  std::string_view text = TrimBlanks(*raw);
  std::string name(key);
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return MakeError(ErrorCode::InvalidParameter, "Parameter '" + name + "' must be integer");
  if (n < 0)
    return MakeError(ErrorCode::InvalidParameter, "Parameter '" + name + "' must be positive");
  if (max && n > *max)
    return MakeError(ErrorCode::InvalidParameter,
                     "Parameter '" + name + "' must not be greater than " + std::to_string(*max));
  return n;
}

// 200 with the answer's JSON, its revision, and a short private cache lifetime (a push
// changes the answers; private datasets must stay out of shared caches).
Response Answer(const ViewerAnswer& a) {
  Response res = Response::Json(200, json::serialize(a.body));
  if (!a.revision.empty()) res.SetHeader("X-Revision", a.revision);
  res.SetHeader("Cache-Control", "private, max-age=30");
  res.SetHeader("Access-Control-Expose-Headers", "X-Error-Code, X-Revision");
  return res;
}

Result<Response> IsValid(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, DatasetParam(q));
  std::string config = Param(q, "config"), split = Param(q, "split");
  if (config.empty()) split.clear();  // the split level needs both (§2.1)
  HANGAR_ASSIGN_OR_RETURN(auto a, v.IsValid(q.principal, id, config, split));
  return Answer(a);
}

// /splits, /parquet, /info, /size: the dataset or one config.
template <typename Call>
Result<Response> ConfigOrDataset(Request& q, Call call) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, DatasetParam(q));
  HANGAR_ASSIGN_OR_RETURN(auto a, call(id, Param(q, "config")));
  return Answer(a);
}

Result<Response> FirstRows(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(SplitParams p, SplitLevel(q));
  HANGAR_ASSIGN_OR_RETURN(auto a, v.FirstRows(q.principal, p.id, p.config, p.split));
  return Answer(a);
}

Result<Response> Rows(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(SplitParams p, SplitLevel(q));
  HANGAR_ASSIGN_OR_RETURN(int64_t offset, Count(q, "offset", 0, std::nullopt));
  HANGAR_ASSIGN_OR_RETURN(int64_t length, Count(q, "length", kMaxLength, kMaxLength));
  HANGAR_ASSIGN_OR_RETURN(auto a, v.Rows(q.principal, p.id, p.config, p.split, offset, length));
  return Answer(a);
}

// /search: `query` required; /filter: `where` and `orderby` optional (§4.5, §4.6). Both
// take the offset and length of /rows.
Result<Response> Search(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(SplitParams p, SplitLevel(q));
  std::string query = Param(q, "query");
  if (query.empty()) return Missing("Parameter 'query' is required");
  HANGAR_ASSIGN_OR_RETURN(int64_t offset, Count(q, "offset", 0, std::nullopt));
  HANGAR_ASSIGN_OR_RETURN(int64_t length, Count(q, "length", kMaxLength, kMaxLength));
  HANGAR_ASSIGN_OR_RETURN(auto a,
                          v.Search(q.principal, p.id, p.config, p.split, query, offset, length));
  return Answer(a);
}

Result<Response> Filter(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(SplitParams p, SplitLevel(q));
  HANGAR_ASSIGN_OR_RETURN(int64_t offset, Count(q, "offset", 0, std::nullopt));
  HANGAR_ASSIGN_OR_RETURN(int64_t length, Count(q, "length", kMaxLength, kMaxLength));
  HANGAR_ASSIGN_OR_RETURN(auto a, v.Filter(q.principal, p.id, p.config, p.split, Param(q, "where"),
                                           Param(q, "orderby"), offset, length));
  return Answer(a);
}

Result<Response> Statistics(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(SplitParams p, SplitLevel(q));
  HANGAR_ASSIGN_OR_RETURN(auto a, v.Statistics(q.principal, p.id, p.config, p.split));
  return Answer(a);
}

// The shards of the hub routes, from the dataset-level /parquet answer: per config and
// split, the file URLs in shard order.
using ShardUrls = std::map<std::string, std::map<std::string, std::vector<std::string>>>;
Result<ShardUrls> Shards(ViewerService& v, const Request& q, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(auto a, v.Parquet(q.principal, id, "", q.base_url));
  ShardUrls out;
  for (const auto& f : a.body.at("parquet_files").as_array()) {
    const auto& o = f.as_object();
    out[std::string(o.at("config").as_string())][std::string(o.at("split").as_string())].push_back(
        std::string(o.at("url").as_string()));
  }
  return out;
}

Result<Response> HubParquet(ViewerService& v, Request& q) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(q, RepoType::Dataset));
  HANGAR_ASSIGN_OR_RETURN(ShardUrls shards, Shards(v, q, id));
  bool ok = true;
  std::string config = PercentDecode(q.Param("config"), &ok);
  std::string split = PercentDecode(q.Param("split"), &ok);
  std::string file = PercentDecode(q.Param("file"), &ok);
  std::string base = q.base_url + "/api/datasets/" + id.Id() + "/parquet/";
  auto urls = [&](const std::string& c, const std::string& s, size_t n) {
    json::array out;
    for (size_t i = 0; i < n; ++i)
      out.push_back(json::string(base + PercentEncode(c) + "/" + PercentEncode(s) + "/" +
                                 std::to_string(i) + ".parquet"));
    return out;
  };
  if (config.empty()) {
    json::object out;
    for (const auto& [c, splits] : shards) {
      json::object per_split;
      for (const auto& [s, list] : splits) per_split[s] = urls(c, s, list.size());
      out[c] = std::move(per_split);
    }
    return Response::Json(200, json::serialize(out));
  }
  auto c = shards.find(config);
  if (!ok || c == shards.end() || !c->second.contains(split))
    return MakeError(ErrorCode::EntryNotFound, "no Parquet export of this config and split");
  const auto& list = c->second.at(split);
  if (file.empty()) return Response::Json(200, json::serialize(urls(config, split, list.size())));
  size_t n = 0;
  auto [end, ec] = std::from_chars(file.data(), file.data() + file.size(), n);
  if (ec != std::errc() || std::string_view(end) != ".parquet" || n >= list.size())
    return MakeError(ErrorCode::EntryNotFound, "no such Parquet shard");
  Response res;
  res.status = 302;
  res.SetHeader("Location", list[n]);
  return res;
}

}  // namespace

void AddViewerRoutes(http::Router& r, ViewerService& v) {
  auto add = [&](std::string path, std::function<Result<Response>(Request&)> h) {
    r.Add(http::Method::Get, std::move(path), http::ApiFamily::Viewer, http::Requirement::Public(),
          std::move(h));
  };
  add("/is-valid", [&v](Request& q) { return IsValid(v, q); });
  add("/splits", [&v](Request& q) {
    return ConfigOrDataset(
        q, [&](const RepoId& id, const std::string& c) { return v.Splits(q.principal, id, c); });
  });
  add("/first-rows", [&v](Request& q) { return FirstRows(v, q); });
  add("/rows", [&v](Request& q) { return Rows(v, q); });
  add("/search", [&v](Request& q) { return Search(v, q); });
  add("/filter", [&v](Request& q) { return Filter(v, q); });
  add("/statistics", [&v](Request& q) { return Statistics(v, q); });
  add("/croissant-crumbs", [&v](Request& q) -> Result<Response> {
    HANGAR_ASSIGN_OR_RETURN(RepoId id, DatasetParam(q));
    HANGAR_ASSIGN_OR_RETURN(auto a,
                            v.Croissant(q.principal, id, Param(q, "full") != "false", q.base_url));
    return Answer(a);
  });
  add("/parquet", [&v](Request& q) {
    return ConfigOrDataset(q, [&](const RepoId& id, const std::string& c) {
      return v.Parquet(q.principal, id, c, q.base_url);
    });
  });
  add("/info", [&v](Request& q) {
    return ConfigOrDataset(
        q, [&](const RepoId& id, const std::string& c) { return v.Info(q.principal, id, c); });
  });
  add("/size", [&v](Request& q) {
    return ConfigOrDataset(
        q, [&](const RepoId& id, const std::string& c) { return v.Size(q.principal, id, c); });
  });
  const auto read = http::Requirement::Repo(RepoType::Dataset, Access::Read);
  const std::string base = "/api/datasets/{ns}/{name}/parquet";
  for (std::string pattern : {base, base + "/{config}/{split}", base + "/{config}/{split}/{file}"})
    r.Add(http::Method::Get, pattern, http::ApiFamily::Hf, read,
          [&v](Request& q) { return HubParquet(v, q); });
}

}  // namespace hangar::api

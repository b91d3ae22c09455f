// History and storage management handlers (docs/lfs-files.md): parse, call
// RepoStorageService, render.

#include "api/storage/storage_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::RepoStorageService;

// A purge body holds up to 1000 object ids of 64 hex digits.
constexpr size_t kMaxStorageBody = 256 << 10;

// The body as a JSON object; none is an empty one (super-squash may send none).
Result<json::object> BodyObject(http::Request& req) {
  return ReadJsonObject(req, kMaxStorageBody, ErrorCode::BadRequest, true);
}

Result<http::Response> SuperSquash(RepoStorageService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  const std::string branch = PercentDecode(req.Param("branch"));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string message, StringField(body, "message"));
  HANGAR_ASSIGN_OR_RETURN(Oid commit, s.SuperSquash(req.principal, id, branch, message));
  return JsonResponse(json::object{{"commitOid", commit.Hex()}});
}

json::object PurgeJson(const db::LfsPurgeRecord& p) {
  json::array oids;
  for (const auto& o : p.oids) oids.push_back(json::string(o.Hex()));
  json::array refs;
  size_t pos = 0;
  while (pos < p.refs.size()) {
    std::string_view line = NextLine(p.refs, pos);
    size_t a = line.find(' '), b = line.rfind(' ');
    if (a == line.npos || a == b) continue;
    refs.push_back(json::object{{"ref", line.substr(0, a)},
                                {"from", line.substr(a + 1, b - a - 1)},
                                {"to", line.substr(b + 1)}});
  }
  return json::object{{"id", p.id},
                      {"user", p.user_name},
                      {"deleted", std::move(oids)},
                      {"rewriteHistory", p.rewrite},
                      {"refs", std::move(refs)},
                      {"createdAt", Iso8601(p.created_at)}};
}

Result<http::Response> ListLfsFiles(RepoStorageService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int limit, LimitQuery(req, 100, 1000));
  HANGAR_ASSIGN_OR_RETURN(
      auto page, s.ListLfsFiles(req.principal, id, req.Query("cursor").value_or(""), limit));
  json::array out;
  for (const auto& f : page.items) {
    const std::string oid = f.link.oid.Hex();
    json::object o{{"fileOid", oid},
                   {"oid", f.first ? f.first->blob.Hex() : oid},
                   {"size", f.link.size},
                   {"filename", f.first ? f.first->path : ""}};
    int64_t pushed = f.link.created_at;
    if (pushed == 0 && f.first) pushed = f.first->time;  // linked before pushedAt was kept
    o["pushedAt"] = Iso8601(pushed);
    if (f.first) o["commit"] = f.first->commit.Hex();
    out.push_back(std::move(o));
  }
  http::Response res = JsonResponse(out);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

Result<http::Response> PurgeLfsFiles(RepoStorageService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  // This call cannot be undone: a key it does not know (a misplaced rewriteHistory) is
  // refused rather than ignored.
  for (const auto& kv : body) {
    if (kv.key() != "deletions") {
      return MakeError(ErrorCode::BadRequest, "unknown field '" +
                                                  std::string(kv.key()).substr(0, 40) +
                                                  "' (rewriteHistory goes inside deletions)");
    }
  }
  const json::value* deletions = body.if_contains("deletions");
  if (!deletions || !deletions->is_object()) {
    return MakeError(ErrorCode::BadRequest, "'deletions' must be an object");
  }
  const json::object& d = deletions->as_object();
  for (const auto& kv : d) {
    if (kv.key() != "sha" && kv.key() != "rewriteHistory") {
      return MakeError(ErrorCode::BadRequest,
                       "unknown field 'deletions." + std::string(kv.key()).substr(0, 40) + "'");
    }
  }
  const json::value* sha = d.if_contains("sha");
  if (!sha || !sha->is_array()) {
    return MakeError(ErrorCode::BadRequest, "'deletions.sha' must be an array of SHA-256 ids");
  }
  std::vector<Sha256> oids;
  for (const auto& v : sha->as_array()) {
    auto oid = v.is_string() ? Sha256::ParseHex(std::string_view(v.as_string())) : std::nullopt;
    if (!oid) {
      return MakeError(ErrorCode::BadRequest,
                       "'deletions.sha' holds something that is not a SHA-256 id (64 hex digits)");
    }
    oids.push_back(*oid);
  }
  bool rewrite = true;  // the client's default
  if (const json::value* r = d.if_contains("rewriteHistory"); r && !r->is_null()) {
    if (!r->is_bool())
      return MakeError(ErrorCode::BadRequest, "'rewriteHistory' must be a boolean");
    rewrite = r->as_bool();
  }
  HANGAR_ASSIGN_OR_RETURN(auto purge, s.Purge(req.principal, id, oids, rewrite));
  return JsonResponse(PurgeJson(purge));
}

Result<http::Response> Purges(RepoStorageService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto purges, s.Purges(req.principal, id));
  json::array out;
  for (const auto& p : purges) out.push_back(PurgeJson(p));
  return JsonResponse(out);
}

}  // namespace

void AddStorageRoutes(http::Router& r, RepoStorageService& storage) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  auto capped = [](http::Request& q) { return CheckDeclaredLength(q, kMaxStorageBody); };
  using Handler = Result<http::Response> (*)(RepoStorageService&, http::Request&, RepoType);
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base = "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}";
    auto add = [&](Method m, const std::string& path, Requirement need, Handler h) {
      r.Add(m, base + path, ApiFamily::Hf, std::move(need),
            [&storage, t, h](http::Request& q) { return h(storage, q, t); });
    };
    add(Method::Post, "/super-squash/{branch}", Requirement::Repo(t, Access::Write).Also(capped),
        SuperSquash);
    add(Method::Get, "/lfs-files", Requirement::Repo(t, Access::Write), ListLfsFiles);
    add(Method::Post, "/lfs-files/batch", Requirement::Repo(t, Access::Admin).Also(capped),
        PurgeLfsFiles);
    add(Method::Get, "/lfs-files/purges", Requirement::Repo(t, Access::Admin), Purges);
  }
}

}  // namespace hangar::api

// Likes and overview handlers (docs/social.md): parse, call SocialService, render.

#include "api/social/social_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::SocialService;

constexpr size_t kMaxLikeBody = 1024;

Result<http::Response> SetLike(SocialService& social, http::Request& req, RepoType type,
                               bool like) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  // huggingface_hub sends no body; whatever comes is read up to 1 KiB (a declared length is
  // capped at the head, a chunked one here: 413) and ignored.
  HANGAR_ASSIGN_OR_RETURN(std::string ignored, req.ReadBody(kMaxLikeBody));
  if (like) {
    HANGAR_TRY(social.Like(req.principal, id));
  } else {
    HANGAR_TRY(social.Unlike(req.principal, id));
  }
  return JsonResponse(json::object{});
}

Result<http::Response> Likers(SocialService& social, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int limit, LimitQuery(req, 100, 1000));
  HANGAR_ASSIGN_OR_RETURN(
      auto page, social.Likers(req.principal, id, req.Query("cursor").value_or(""), limit));
  json::array out;
  for (const auto& l : page.items) {
    out.push_back(
        json::object{{"user", l.user_name},
                     {"fullname", l.user_fullname.empty() ? l.user_name : l.user_fullname},
                     {"type", "user"},
                     {"isPro", false},
                     {"avatarUrl", AvatarUrl(l.user_name)}});
  }
  http::Response res = JsonResponse(out);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

Result<http::Response> UserLikes(SocialService& social, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(int limit, LimitQuery(req, 100, 1000));
  HANGAR_ASSIGN_OR_RETURN(auto page, social.LikedBy(req.principal, PercentDecode(req.Param("user")),
                                                    req.Query("cursor").value_or(""), limit));
  json::array out;
  for (const auto& l : page.items) {
    out.push_back(json::object{{"createdAt", Iso8601(l.created_at)},
                               {"repo", json::object{{"name", l.repo_ns + "/" + l.repo_name},
                                                     {"type", RepoTypeName(l.repo_type)}}}});
  }
  http::Response res = JsonResponse(out);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

// The repo counts of an overview, as the public hub names them.
void PutCounts(json::object& o, const db::RepoCounts& c) {
  o["numModels"] = c.models;
  o["numDatasets"] = c.datasets;
  o["numSpaces"] = c.spaces;
}

Result<http::Response> UserOverview(SocialService& social, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto v, social.User(req.principal, PercentDecode(req.Param("user"))));
  json::array orgs;
  for (const auto& org : v.orgs) {
    orgs.push_back(json::object{{"name", org.name},
                                {"fullname", org.fullname.empty() ? org.name : org.fullname},
                                {"avatarUrl", AvatarUrl(org.name)}});
  }
  json::object o{{"_id", ObjectId(v.user.id, '6')},
                 {"user", v.user.name},
                 {"fullname", v.user.fullname.empty() ? v.user.name : v.user.fullname},
                 {"type", "user"},
                 {"avatarUrl", AvatarUrl(v.user.name)},
                 {"isPro", false},
                 {"createdAt", Iso8601(v.user.created_at)},
                 {"numLikes", v.likes},
                 {"orgs", std::move(orgs)}};
  PutCounts(o, v.repos);
  return JsonResponse(o);
}

Result<http::Response> OrgOverview(SocialService& social, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto v, social.Org(req.principal, PercentDecode(req.Param("org"))));
  json::object o{{"_id", ObjectId(v.org.id, '7')},
                 {"name", v.org.name},
                 {"fullname", v.org.fullname.empty() ? v.org.name : v.org.fullname},
                 {"type", "org"},
                 {"avatarUrl", AvatarUrl(v.org.name)},
                 {"createdAt", Iso8601(v.org.created_at)},
                 {"numUsers", v.members}};
  PutCounts(o, v.repos);
  return JsonResponse(o);
}

}  // namespace

void AddSocialRoutes(http::Router& r, SocialService& social) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  auto small = [](http::Request& q) { return CheckDeclaredLength(q, kMaxLikeBody); };
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base = "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}";
    r.Add(Method::Post, base + "/like", ApiFamily::Hf, Requirement::WriteRole().Also(small),
          [&social, t](http::Request& q) { return SetLike(social, q, t, true); });
    r.Add(Method::Delete, base + "/like", ApiFamily::Hf, Requirement::WriteRole().Also(small),
          [&social, t](http::Request& q) { return SetLike(social, q, t, false); });
    r.Add(Method::Get, base + "/likers", ApiFamily::Hf, Requirement::Repo(t, Access::Read),
          [&social, t](http::Request& q) { return Likers(social, q, t); });
  }
  r.Add(Method::Get, "/api/users/{user}/likes", ApiFamily::Hf, Requirement::Public(),
        [&social](http::Request& q) { return UserLikes(social, q); });
  r.Add(Method::Get, "/api/users/{user}/overview", ApiFamily::Hf, Requirement::Public(),
        [&social](http::Request& q) { return UserOverview(social, q); });
  r.Add(Method::Get, "/api/organizations/{org}/overview", ApiFamily::Hf, Requirement::Public(),
        [&social](http::Request& q) { return OrgOverview(social, q); });
}

}  // namespace hangar::api

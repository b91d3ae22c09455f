// Likes on the web (issue 19 §3, docs/social.md): the count and the like / unlike button of
// a repo's home page. Rules live in services::SocialService.

#include "services/social/social_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

Result<http::Response> SetLike(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"like"}));
  const std::string like = form.Get("like");
  if (like == "1") {
    HANGAR_TRY(deps.social->Like(ctx.principal, id));
  } else if (like == "0") {
    HANGAR_TRY(deps.social->Unlike(ctx.principal, id));
  } else {
    return MakeError(ErrorCode::BadRequest, "like: 1 or 0");
  }
  return SeeOther(ctx, RepoPath(id));
}

}  // namespace

Result<void> SetLikes(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                      Data& data) {
  data.set("likes", std::to_string(repo.record.likes));
  if (!deps.social || !ctx.signed_in || !ctx.principal.CanWrite()) return {};
  HANGAR_ASSIGN_OR_RETURN(bool liked, deps.social->Likes(ctx.principal, repo.record));
  data.set("like_form", true);
  data.set("liked", liked);
  return {};
}

void AddLikePages(http::Router& router, WebDeps& deps, RepoType type) {
  if (!deps.social) return;
  const std::string path = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/like";
  AddPage(router, deps, http::Method::Post, path, http::Requirement::WriteRole(),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return SetLike(deps, ctx, req, type);
          });
}

}  // namespace hangar::web

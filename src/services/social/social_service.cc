#include "services/social/social_service.h"

#include <algorithm>

#include "core/util.h"

namespace hangar::services {
namespace {

// `rows` (read with limit + 1) as a page of `limit`: the cursor of the next page when a
// row was left over, else "".
LikePage ToPage(std::vector<db::LikeRecord> rows, int limit, bool by_user) {
  LikePage page;
  if (static_cast<int>(rows.size()) > limit) {
    rows.resize(limit);
    const auto& last = rows.back();
    page.next_cursor = KeysetCursor(last.created_at, by_user ? last.user_id : last.repo_id);
  }
  page.items = std::move(rows);
  return page;
}

Result<db::LikeCursor> ParseCursor(const std::string& cursor) {
  db::LikeCursor out;
  if (cursor.empty()) return out;
  auto parsed = ParseKeysetCursor(cursor);
  if (!parsed) return MakeError(ErrorCode::BadRequest, "malformed cursor");
  out.created_at = parsed->first;
  out.id = parsed->second;
  out.started = true;
  return out;
}

}  // namespace

SocialService::SocialService(RepoService& repos, AccessPolicy& access, AccountService& accounts,
                             db::RepoStore& repo_rows, db::LikeStore& likes)
    : repos_(repos), access_(access), accounts_(accounts), repo_rows_(repo_rows), likes_(likes) {}

Result<RepoHandle> SocialService::OpenToLike(const Principal& who, const RepoId& id) {
  if (who.anonymous || who.user_id == 0) {
    return MakeError(ErrorCode::Unauthorized, "sign in to like a repo");
  }
  if (who.deploy_key_id != 0 || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a key bound to one repo cannot like repos");
  }
  if (who.role == TokenRole::Read) {
    return MakeError(ErrorCode::Forbidden, "a read token cannot like repos; use a write token");
  }
  return repos_.OpenMetadata(who, id);
}

Result<bool> SocialService::Like(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, OpenToLike(who, id));
  HANGAR_ASSIGN_OR_RETURN(bool added, likes_.Like(repo.record.id, who.user_id, NowUnix()));
  if (added) repos_.Invalidate(id);
  return added;
}

Result<bool> SocialService::Unlike(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, OpenToLike(who, id));
  HANGAR_ASSIGN_OR_RETURN(bool removed, likes_.Unlike(repo.record.id, who.user_id));
  if (removed) repos_.Invalidate(id);
  return removed;
}

Result<bool> SocialService::Likes(const Principal& who, const db::RepoRecord& repo) {
  if (who.anonymous || who.user_id == 0) return false;
  return likes_.Likes(repo.id, who.user_id);
}

Result<LikePage> SocialService::Likers(const Principal& who, const RepoId& id,
                                       const std::string& cursor, int limit) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  HANGAR_ASSIGN_OR_RETURN(db::LikeCursor after, ParseCursor(cursor));
  limit = std::clamp(limit, 1, 1000);
  HANGAR_ASSIGN_OR_RETURN(auto rows, likes_.Likers(repo.record.id, after, limit + 1));
  return ToPage(std::move(rows), limit, /*by_user=*/true);
}

Result<LikePage> SocialService::LikedBy(const Principal& who, std::string_view name,
                                        const std::string& cursor, int limit) {
  HANGAR_ASSIGN_OR_RETURN(db::UserRecord user, accounts_.FindUser(name));
  HANGAR_ASSIGN_OR_RETURN(db::LikeCursor after, ParseCursor(cursor));
  HANGAR_ASSIGN_OR_RETURN(db::LikeVisibility visible, access_.VisibilityOf(who));
  limit = std::clamp(limit, 1, 1000);
  HANGAR_ASSIGN_OR_RETURN(auto rows, likes_.LikedBy(user.id, visible, after, limit + 1));
  return ToPage(std::move(rows), limit, /*by_user=*/false);
}

Result<UserOverview> SocialService::User(const Principal& who, std::string_view name) {
  UserOverview out;
  HANGAR_ASSIGN_OR_RETURN(out.user, accounts_.FindUser(name));
  HANGAR_ASSIGN_OR_RETURN(auto memberships, accounts_.OrgsOfUser(out.user.id));
  for (auto& m : memberships) out.orgs.push_back(std::move(m.org));
  const bool sees_private =
      who.repo_scope == 0 && access_.NamespaceAccess(who, name) >= Access::Read;
  HANGAR_ASSIGN_OR_RETURN(out.repos, repo_rows_.Count(out.user.name, sees_private));
  HANGAR_ASSIGN_OR_RETURN(db::LikeVisibility visible, access_.VisibilityOf(who));
  HANGAR_ASSIGN_OR_RETURN(out.likes, likes_.CountLikedBy(out.user.id, visible));
  return out;
}

Result<OrgOverview> SocialService::Org(const Principal& who, std::string_view name) {
  OrgOverview out;
  HANGAR_ASSIGN_OR_RETURN(out.org, accounts_.FindOrg(name));
  HANGAR_ASSIGN_OR_RETURN(auto members, accounts_.Members(out.org.id));
  out.members = static_cast<int64_t>(members.size());
  const bool sees_private =
      who.repo_scope == 0 && access_.NamespaceAccess(who, name) >= Access::Read;
  HANGAR_ASSIGN_OR_RETURN(out.repos, repo_rows_.Count(out.org.name, sees_private));
  return out;
}

}  // namespace hangar::services

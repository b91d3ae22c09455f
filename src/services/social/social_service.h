#pragma once
// SocialService: what the public hub shows around repos and people (issue 19 §3,
// docs/social.md) — who likes a repo (`like`, `unlike`, `list_repo_likers`,
// `list_liked_repos`) and the overviews of users and orgs (`get_user_overview`,
// `get_organization_overview`). Rules only; the rows are db::LikeStore's and
// db::RepoStore's.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/like_store.h"
#include "db/repo_store.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// A page of likes, newest first.
struct LikePage {
  std::vector<db::LikeRecord> items;
  std::string next_cursor;  // "" on the last page
};

struct UserOverview {
  db::UserRecord user;
  std::vector<db::OrgRecord> orgs;
  db::RepoCounts repos;  // those the caller may see
  int64_t likes = 0;     // repos they like that the caller may see
};

struct OrgOverview {
  db::OrgRecord org;
  int64_t members = 0;
  db::RepoCounts repos;  // those the caller may see
};

// Thread-safe; one per process. Calls block (database).
class SocialService {
 public:
  SocialService(RepoService& repos, AccessPolicy& access, AccountService& accounts,
                db::RepoStore& repo_rows, db::LikeStore& likes);

  // `who` likes repo `id` (any repo they may see, gated ones included); false when they
  // did already. Errors: Unauthorized (anonymous), Forbidden (a read token, a deploy key
  // or a credential bound to one repo), those of RepoService::OpenMetadata.
  Result<bool> Like(const Principal& who, const RepoId& id);
  // Takes the like back; false when there was none. Errors: as Like.
  Result<bool> Unlike(const Principal& who, const RepoId& id);
  // Whether `who` likes `repo` (false for anonymous). Errors: the store's.
  Result<bool> Likes(const Principal& who, const db::RepoRecord& repo);
  // Who likes `id`, `limit` (1..1000) per page after `cursor` ("" = the newest). Errors:
  // those of RepoService::OpenMetadata; BadRequest (a foreign cursor).
  Result<LikePage> Likers(const Principal& who, const RepoId& id, const std::string& cursor,
                          int limit);
  // The repos user `name` likes that `who` may see, as Likers. Errors: NotFound (no such
  // user); BadRequest (a foreign cursor).
  Result<LikePage> LikedBy(const Principal& who, std::string_view name, const std::string& cursor,
                           int limit);
  // User `name` as `who` sees them. Errors: NotFound.
  Result<UserOverview> User(const Principal& who, std::string_view name);
  // Org `name` as `who` sees it. Errors: NotFound.
  Result<OrgOverview> Org(const Principal& who, std::string_view name);

 private:
  // Opens `id` for a like of `who`'s. Errors: as Like.
  Result<RepoHandle> OpenToLike(const Principal& who, const RepoId& id);

  RepoService& repos_;
  AccessPolicy& access_;
  AccountService& accounts_;
  db::RepoStore& repo_rows_;
  db::LikeStore& likes_;
};

}  // namespace hangar::services

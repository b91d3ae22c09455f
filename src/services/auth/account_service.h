#pragma once
// AccountService: what the web pages read about users, organizations and their members
// (profile pages, the organization settings pages), so that web/ talks to services only
// (docs/architecture.md). Creating and changing accounts, orgs and memberships, with their
// access rules, is AuthService's.

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "db/user_store.h"

namespace hangar::services {

// Thread-safe; calls block on the database.
class AccountService {
 public:
  explicit AccountService(db::UserStore& users) : users_(users) {}

  // Whether `name` is a user's, an org's, or nobody's. Errors: Internal.
  Result<db::NamespaceKind> NamespaceKind(std::string_view name);
  // The user or org of that name. Errors: NotFound, Internal.
  Result<db::UserRecord> FindUser(std::string_view name);
  Result<db::OrgRecord> FindOrg(std::string_view name);
  // The orgs `user_id` belongs to, with the role in each. Errors: Internal.
  Result<std::vector<db::OrgMembership>> OrgsOfUser(int64_t user_id);
  // The members of org `org_id`, with their roles. Errors: Internal.
  Result<std::vector<db::OrgMember>> Members(int64_t org_id);

 private:
  db::UserStore& users_;
};

}  // namespace hangar::services

#include "services/auth/account_service.h"

namespace hangar::services {

Result<db::NamespaceKind> AccountService::NamespaceKind(std::string_view name) {
  return users_.GetNamespaceKind(name);
}

Result<db::UserRecord> AccountService::FindUser(std::string_view name) {
  return users_.FindUserByName(name);
}

Result<db::OrgRecord> AccountService::FindOrg(std::string_view name) {
  return users_.FindOrgByName(name);
}

Result<std::vector<db::OrgMembership>> AccountService::OrgsOfUser(int64_t user_id) {
  return users_.ListOrgsOfUser(user_id);
}

Result<std::vector<db::OrgMember>> AccountService::Members(int64_t org_id) {
  return users_.ListMembers(org_id);
}

}  // namespace hangar::services

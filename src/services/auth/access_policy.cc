#include "services/auth/access_policy.h"

#include <string>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {
namespace {

Access FromOrgRole(db::OrgRole r) {
  switch (r) {
    case db::OrgRole::Admin:
      return Access::Admin;
    case db::OrgRole::Write:
      return Access::Write;
    case db::OrgRole::Read:
      break;
  }
  return Access::Read;
}

// The change feed's topic of org-membership changes (keys: MembershipKey).
constexpr std::string_view kMembershipTopic = "membership";

std::string MembershipKey(int64_t user_id, std::string_view ns) {
  return std::to_string(user_id) + "/" + std::string(ns);
}

}  // namespace

AccessPolicy::AccessPolicy(db::UserStore& users, AccessPolicyOptions options)
    : users_(users),
      options_(std::move(options)),
      memberships_(options_.membership_cache_capacity, options_.membership_cache_ttl_ms) {
  if (!options_.now_millis) options_.now_millis = NowUnixMillis;
  if (options_.changes) {
    membership_changes_ =
        db::EvictOnChange(*options_.changes, std::string(kMembershipTopic), memberships_);
  }
}

Access AccessPolicy::NamespaceAccess(const Principal& who, std::string_view ns) {
  // A deploy key belongs to one repo, never to a namespace (RepoService::Open decides it).
  if (who.anonymous || who.deploy_key_id != 0) return Access::None;
  Access access = Access::None;
  if (who.is_admin || who.name == ns) {
    access = Access::Admin;
  } else {
    const std::string key = MembershipKey(who.user_id, ns);
    const int64_t now_ms = options_.now_millis();
    std::optional<db::OrgRole> role;
    bool hit = memberships_.Visit(key, now_ms, [&](auto& r) { role = r; });
    if (!hit) {
      auto r = users_.MemberRole(ns, who.user_id);
      if (!r) {
        Log("auth")->error("membership lookup failed: {}", r.error().message);
        return Access::None;
      }
      role = *r;
      memberships_.Put(key, role, now_ms);
    }
    if (role) access = FromOrgRole(*role);
  }
  // A token never grants more than its own role.
  if (who.role == TokenRole::Read && access > Access::Read) access = Access::Read;
  return access;
}

Result<Principal> AccessPolicy::ReaderOf(int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(db::UserRecord user, users_.FindUserById(user_id));
  return Principal::User(user.id, user.name, user.is_admin, TokenRole::Read, "download link");
}

Result<db::NamespaceVisibility> AccessPolicy::VisibilityOf(const Principal& who) {
  db::RepoQuery q;
  HANGAR_TRY(ApplyVisibility(who.repo_scope != 0 ? Principal::Anonymous() : who, q));
  return db::NamespaceVisibility{q.include_all_private, std::move(q.readable_namespaces)};
}

Result<void> AccessPolicy::ApplyVisibility(const Principal& who, db::RepoQuery& q) {
  q.include_all_private = false;
  q.readable_namespaces.clear();
  if (who.anonymous) return {};
  if (who.is_admin) {
    q.include_all_private = true;
    return {};
  }
  HANGAR_ASSIGN_OR_RETURN(auto orgs, users_.ListOrgsOfUser(who.user_id));
  q.readable_namespaces.push_back(who.name);
  for (const auto& m : orgs) q.readable_namespaces.push_back(m.org.name);
  return {};
}

void AccessPolicy::ForgetMembership(int64_t user_id, std::string_view org) {
  std::string key = MembershipKey(user_id, org);
  memberships_.Erase(key);
  if (options_.changes) options_.changes->Publish(kMembershipTopic, key);
}

}  // namespace hangar::services

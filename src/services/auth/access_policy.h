#pragma once
// AccessPolicy: what a principal may do. The access a principal has to a namespace (own
// namespace, site admin, org role, capped by the token's role), and which private repos a
// listing may show them (hf-api.md §1.7). Reads memberships through a short-lived cache.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "core/principal.h"
#include "core/result.h"
#include "core/ttl_cache.h"
#include "db/change_feed.h"
#include "db/repo_store.h"
#include "db/user_store.h"
#include "db/visibility.h"

namespace hangar::services {

// What a principal may do in a namespace (and so in its repos): core/principal.h.
using ::hangar::Access;

struct AccessPolicyOptions {
  // Org-membership lookups kept in memory (NamespaceAccess), and for how long. A change
  // made through AccountService is seen at once (it calls ForgetMembership), by every
  // process on `changes` too.
  size_t membership_cache_capacity = 10000;
  int64_t membership_cache_ttl_ms = 1000;
  // Clock in unix milliseconds; defaults to NowUnixMillis. Tests inject their own.
  std::function<int64_t()> now_millis;
  // The feed membership changes are published on and heard from (topic "membership",
  // key "<user id>/<org>"); none: this process alone.
  db::ChangeFeed* changes = nullptr;
};

// Thread-safe; one per process, shared by all workers. Calls may block on the database
// (membership cache misses, listings).
class AccessPolicy {
 public:
  explicit AccessPolicy(db::UserStore& users, AccessPolicyOptions options = {});

  // The access `who` has to namespace `ns`: its own user namespace and site admins → Admin,
  // org members → their role, others → None; capped at Read for read tokens. Never fails
  // (a database error gives None and is logged).
  Access NamespaceAccess(const Principal& who, std::string_view ns);
  // Sets q.include_all_private / q.readable_namespaces so a listing shows `who` exactly the
  // private repos they can read. Errors: Internal.
  Result<void> ApplyVisibility(const Principal& who, db::RepoQuery& q);
  // The same for listings of likes and collections (db/visibility.h); a credential bound
  // to one repo sees nothing private through its namespaces. Errors: Internal.
  Result<db::NamespaceVisibility> VisibilityOf(const Principal& who);
  // User `user_id` as a reader (a read token of theirs), for a credential that names only
  // the user (an LFS download link). Errors: NotFound (no such user), Internal.
  Result<Principal> ReaderOf(int64_t user_id);

  // Drops the cached membership of `user_id` in org `org`, so the next NamespaceAccess
  // reads it again: AccountService calls it after changing a membership.
  void ForgetMembership(int64_t user_id, std::string_view org);

 private:
  db::UserStore& users_;
  AccessPolicyOptions options_;
  TtlCache<std::optional<db::OrgRole>> memberships_;  // keyed by "<user id>/<org>"
  db::ChangeFeed::Subscription membership_changes_;   // after memberships_
};

}  // namespace hangar::services

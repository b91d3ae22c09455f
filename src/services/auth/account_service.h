#pragma once
// AccountService: the accounts. Creates users and orgs, sets and checks passwords (argon2id),
// changes memberships, and answers what the web pages read about users, orgs and their
// members (profile and organization settings pages), so that web/ talks to services only
// (docs/architecture.md). Who may do what is AccessPolicy's; tokens are Authenticator's.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"

namespace hangar::services {

struct AccountOptions {
  // Argon2 hashes or verifies running at once (at least 1); each takes argon2_memory_kib of
  // memory. No default of its own: config limits.password_hash_concurrency is its source.
  int password_hash_concurrency = 0;
  // argon2id parameters for new hashes (verification reads them from the stored hash).
  uint32_t argon2_iterations = 2;
  uint32_t argon2_memory_kib = 19 * 1024;
  uint32_t argon2_parallelism = 1;
  // Test hook: called inside the password-hash section with the number of hashes in it.
  std::function<void(int in_flight)> on_password_hash;
};

// Thread-safe; one per process. Calls block on the database, and the password calls on
// argon2 (at most password_hash_concurrency at once).
class AccountService {
 public:
  // `access` is told of every membership change, so its cache never outlives one.
  AccountService(db::UserStore& users, AccessPolicy& access, AccountOptions options = {});

  // ---- users and passwords ----
  // Creates a user; `password` (8–1024 bytes) is hashed with argon2id. Errors: BadRequest
  // for an invalid or reserved name or an invalid password, Conflict when the name is taken
  // by a user or org.
  Result<db::UserRecord> CreateUser(std::string_view name, std::string_view email, bool is_admin,
                                    std::optional<std::string_view> password = std::nullopt,
                                    std::string_view fullname = {});
  // Errors: NotFound (no such user), BadRequest (password not 8–1024 bytes).
  Result<void> SetPassword(std::string_view user, std::string_view password);
  // The user when `password` is theirs (web sign-in, SessionService). Errors: Unauthorized
  // "Invalid username or password" (also for unknown users and users without a password,
  // after as much work as a real check).
  Result<db::UserRecord> CheckPassword(std::string_view user, std::string_view password);

  // ---- orgs and memberships ----
  // Creates an org with `owner` as admin member. Errors: BadRequest (name invalid or
  // reserved), NotFound (owner), Conflict (name taken).
  Result<db::OrgRecord> CreateOrg(std::string_view name, std::string_view owner,
                                  std::string_view fullname = {});
  // Adds `user` to `org` or changes their role. Errors: NotFound (org or user), Conflict
  // when that would leave the org without an admin.
  Result<void> AddMember(std::string_view org, std::string_view user, db::OrgRole role);

  // ---- reads for the web pages ----
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
  Result<std::string> HashPassword(std::string_view password);
  Result<bool> VerifyPassword(const std::string& encoded, std::string_view password);

  db::UserStore& users_;
  AccessPolicy& access_;
  AccountOptions options_;
  std::counting_semaphore<1024> hash_slots_;
  std::atomic<int> hashes_in_flight_{0};
  std::once_flag dummy_once_;
  std::string dummy_hash_;  // verified against for unknown users, to equalize timing
};

}  // namespace hangar::services

#pragma once
// AuthService: who a request is (tokens from the Authorization header) and the user/org/token
// management behind it (hf-api.md §1.7, §9). What a principal may do is AccessPolicy's.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"

namespace hangar::services {

// The exact message of every authentication failure (hf-api.md §1.7).
inline constexpr std::string_view kInvalidCredentials =
    "Invalid credentials in Authorization header";

struct AuthOptions {
  // Argon2 hashes or verifies running at once (at least 1); each takes argon2_memory_kib of
  // memory. No default of its own: config limits.password_hash_concurrency is its source.
  int password_hash_concurrency = 0;
  // Successful token lookups kept in memory, and for how long. A token revoked through
  // this service is evicted at once; revoked elsewhere (another replica, the admin CLI),
  // it stops working within the TTL (1 s).
  size_t token_cache_capacity = 10000;
  int64_t token_cache_ttl_ms = 1000;
  // A token's last_used_at is written at most this often.
  int64_t touch_interval_seconds = 60;
  // argon2id parameters for new hashes (verification reads them from the stored hash).
  uint32_t argon2_iterations = 2;
  uint32_t argon2_memory_kib = 19 * 1024;
  uint32_t argon2_parallelism = 1;
  // Clock in unix milliseconds; defaults to NowUnixMillis. Tests inject their own.
  std::function<int64_t()> now_millis;
  // Test hook: called inside the password-hash section with the number of hashes in it.
  std::function<void(int in_flight)> on_password_hash;
};

// GET /api/whoami-v2 data (hf-api.md §9.1); the HTTP handler renders it.
struct WhoAmIInfo {
  int64_t user_id = 0;
  std::string name;
  std::string fullname;
  std::string email;
  bool is_admin = false;
  int64_t created_at = 0;  // user's, unix seconds
  std::vector<db::OrgMembership> orgs;
  std::string token_display_name;
  TokenRole token_role = TokenRole::Read;
  int64_t token_created_at = 0;  // unix seconds
};

// A freshly issued token: the plaintext, shown once, and what was stored.
struct NewToken {
  std::string token;  // "hf_" + 34 alphanumerics; only its SHA-256 is stored
  db::TokenRecord record;
};

// Thread-safe; one per process, shared by all workers. Calls may block on the database
// (cache misses, management calls) and on argon2 (password calls).
class AuthService {
 public:
  // `access` is told of every membership change, so its cache never outlives one.
  AuthService(db::UserStore& users, AccessPolicy& access, AuthOptions options = {});
  ~AuthService();

  // The principal for an Authorization header value: "" → anonymous; "Bearer <token>" or
  // "Basic base64(<any user>:<token>)" → the token's user. Errors: Unauthorized with
  // kInvalidCredentials for a malformed header or an unknown, revoked or expired token;
  // Internal when the database fails. Served from memory for repeated tokens.
  Result<Principal> Authenticate(std::string_view authorization_header_value);

  // Creates a user; `password` (8–1024 bytes) is hashed with argon2id. Errors: BadRequest
  // for an invalid name or password, Conflict when the name is taken by a user or org.
  Result<db::UserRecord> CreateUser(std::string_view name, std::string_view email, bool is_admin,
                                    std::optional<std::string_view> password = std::nullopt,
                                    std::string_view fullname = {});
  // Errors: NotFound (no such user), BadRequest (password not 8–1024 bytes).
  Result<void> SetPassword(std::string_view user, std::string_view password);
  // The user when `password` is theirs. Errors: Unauthorized "Invalid username or password"
  // (also for unknown users and users without a password).
  Result<db::UserRecord> CheckPassword(std::string_view user, std::string_view password);

  // Issues a token for `user`. Errors: NotFound (user), BadRequest (name empty or > 100).
  Result<NewToken> CreateToken(std::string_view user, std::string_view token_name, TokenRole role,
                               std::optional<int64_t> expires_at = std::nullopt);
  // The user's live tokens (hashes only). Errors: NotFound (user).
  Result<std::vector<db::TokenRecord>> ListTokens(std::string_view user);
  // Revokes the token at once (also in this process's cache). Errors: NotFound.
  Result<void> RevokeToken(std::string_view user, int64_t token_id);

  // Creates an org with `owner` as admin member. Errors: BadRequest (name), NotFound
  // (owner), Conflict (name taken).
  Result<db::OrgRecord> CreateOrg(std::string_view name, std::string_view owner,
                                  std::string_view fullname = {});
  // Adds `user` to `org` or changes their role. Errors: NotFound (org or user), Conflict
  // when that would leave the org without an admin.
  Result<void> AddMember(std::string_view org, std::string_view user, db::OrgRole role);

  // whoami-v2 data. Errors: Unauthorized (kInvalidCredentials) for anonymous principals or
  // vanished users.
  Result<WhoAmIInfo> WhoAmI(const Principal& who);

 private:
  struct Caches;
  Result<std::string> HashPassword(std::string_view password);
  Result<bool> VerifyPassword(const std::string& encoded, std::string_view password);
  int64_t NowMillis() const;

  db::UserStore& users_;
  AccessPolicy& access_;
  AuthOptions options_;
  std::unique_ptr<Caches> caches_;
  std::counting_semaphore<1024> hash_slots_;
  std::atomic<int> hashes_in_flight_{0};
  std::once_flag dummy_once_;
  std::string dummy_hash_;  // verified against for unknown users, to equalize timing
};

}  // namespace hangar::services

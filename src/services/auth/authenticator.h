#pragma once
// Authenticator: who a request is. Turns the Authorization header into a Principal through
// the tokens table and a cache of recent lookups, and issues, lists and revokes the tokens
// (hf-api.md §1.7, §9).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "core/ttl_cache.h"
#include "db/change_feed.h"
#include "db/ssh_key_store.h"
#include "db/user_store.h"

namespace hangar::services {

// The exact message of every authentication failure (hf-api.md §1.7).
inline constexpr std::string_view kInvalidCredentials =
    "Invalid credentials in Authorization header";

struct AuthenticatorOptions {
  // Successful token lookups kept in memory, and for how long. A token revoked through
  // this service is evicted at once, in every process on `changes` too; revoked where no
  // change reaches this process (the admin CLI on SQLite), it stops working within the
  // TTL (1 s).
  size_t token_cache_capacity = 10000;
  int64_t token_cache_ttl_ms = 1000;
  // A token's last_used_at is written at most this often.
  int64_t touch_interval_seconds = 60;
  // Clock in unix milliseconds; defaults to NowUnixMillis. Tests inject their own.
  std::function<int64_t()> now_millis;
  // The feed revocations are published on and heard from (topic "token", key the
  // token's SHA-256 hex); none: this process alone.
  db::ChangeFeed* changes = nullptr;
  // The server secret, which signs repo credentials (repo_credential.h); "" refuses them.
  std::string credential_key;
  // The SSH keys repo credentials were obtained with: a credential whose key is gone (or
  // now belongs elsewhere) is refused at once. None: only the signature and expiry count.
  db::SshKeyStore* ssh_keys = nullptr;
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
// (cache misses, token management).
class Authenticator {
 public:
  explicit Authenticator(db::UserStore& users, AuthenticatorOptions options = {});

  // The principal for an Authorization header value: "" → anonymous; "Bearer <token>" or
  // "Basic base64(<any user>:<token>)" → the token's user; a repo credential
  // (kRepoCredentialPrefix) → its user or deploy key, bound to its repo. Errors: Unauthorized with
  // kInvalidCredentials for a malformed header or an unknown, revoked or expired token;
  // Internal when the database fails. Served from memory for repeated tokens.
  Result<Principal> Authenticate(std::string_view authorization_header_value);

  // Issues a token for `user`. Errors: NotFound (user), BadRequest (name empty or > 100).
  Result<NewToken> CreateToken(std::string_view user, std::string_view token_name, TokenRole role,
                               std::optional<int64_t> expires_at = std::nullopt);
  // The user's live tokens (hashes only). Errors: NotFound (user).
  Result<std::vector<db::TokenRecord>> ListTokens(std::string_view user);
  // Revokes the token at once (also in this process's cache). Errors: NotFound.
  Result<void> RevokeToken(std::string_view user, int64_t token_id);

  // whoami-v2 data (hf-api.md §9.1). Errors: Unauthorized (kInvalidCredentials) for
  // anonymous principals or vanished users.
  Result<WhoAmIInfo> WhoAmI(const Principal& who);

 private:
  struct CachedToken {
    Principal principal;
    std::optional<int64_t> expires_at;  // token expiry, unix seconds
    int64_t last_touch = 0;             // unix seconds of the last last_used_at write
  };
  // A repo credential's principal. Errors: Unauthorized, Internal.
  Result<Principal> FromRepoCredential(std::string_view credential, int64_t now_s);

  db::UserStore& users_;
  AuthenticatorOptions options_;
  TtlCache<CachedToken> tokens_;              // keyed by token SHA-256 hex
  db::ChangeFeed::Subscription revocations_;  // after tokens_, which it erases from
};

}  // namespace hangar::services

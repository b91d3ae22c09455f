#pragma once
// UserStore: users, organizations, org membership and access tokens (metadata DB).
// Interface only; SqlUserStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/result.h"

namespace hangar::db {

// What a name in the shared user/org namespace denotes. A user and an org never share a name.
enum class NamespaceKind { None, User, Org };

// A member's role in an organization.
enum class OrgRole { Read, Write, Admin };

// "read", "write", "admin".
std::string_view OrgRoleName(OrgRole r);
// Inverse of OrgRoleName; nullopt for anything else.
std::optional<OrgRole> ParseOrgRole(std::string_view s);
// "read", "write".
std::string_view TokenRoleName(TokenRole r);
// Inverse of TokenRoleName; nullopt for anything else.
std::optional<TokenRole> ParseTokenRole(std::string_view s);

struct UserRecord {
  int64_t id = 0;
  std::string name;
  std::string fullname;
  std::string email;
  bool is_admin = false;                     // site administrator
  std::optional<std::string> password_hash;  // argon2id encoded string; none = no password
  int64_t created_at = 0;                    // unix seconds
};

struct OrgRecord {
  int64_t id = 0;
  std::string name;
  std::string fullname;
  int64_t created_at = 0;  // unix seconds
};

struct OrgMembership {
  OrgRecord org;
  OrgRole role = OrgRole::Read;
};

struct OrgMember {
  int64_t user_id = 0;
  std::string user_name;
  OrgRole role = OrgRole::Read;
};

struct TokenRecord {
  int64_t id = 0;
  int64_t user_id = 0;
  std::string name;  // display name chosen by the user
  TokenRole role = TokenRole::Read;
  std::string sha256_hex;  // SHA-256 of the token text, 64 lower-case hex; never the text
  int64_t created_at = 0;  // unix seconds
  std::optional<int64_t> last_used_at;  // unix seconds
  std::optional<int64_t> expires_at;    // unix seconds; none = never expires
  bool revoked = false;
};

// A browser session (issue #4, web login). The cookie itself is never stored.
struct SessionRecord {
  std::string id_sha256;  // SHA-256 of the session cookie's value, 64 lower-case hex
  int64_t user_id = 0;
  std::string csrf;        // the session's CSRF token, sent back in every form
  int64_t created_at = 0;  // unix seconds
  int64_t expires_at = 0;  // unix seconds
};

// Users, orgs, memberships, tokens and sessions. Thread-safe: called from many worker threads at
// once. Calls block on I/O. Errors: Internal for storage failures, plus the ones listed per call.
class UserStore {
 public:
  virtual ~UserStore() = default;

  // Inserts `user` (id ignored; created_at 0 means now) and returns it with its id.
  // Errors: Conflict when the name is taken by a user or an org.
  virtual Result<UserRecord> CreateUser(const UserRecord& user) = 0;
  // Errors: NotFound when no user (orgs excluded) has that name.
  virtual Result<UserRecord> FindUserByName(std::string_view name) = 0;
  // Errors: NotFound.
  virtual Result<UserRecord> FindUserById(int64_t id) = 0;
  // Replaces the password hash (none removes it). Errors: NotFound.
  virtual Result<void> SetPasswordHash(int64_t user_id, const std::optional<std::string>& hash) = 0;
  // Sets or clears the site-admin flag. Errors: NotFound.
  virtual Result<void> SetAdmin(int64_t user_id, bool is_admin) = 0;

  // Inserts an org (id ignored; created_at 0 means now) and, when owner_user_id is not 0,
  // makes that user an admin member, in one transaction.
  // Errors: Conflict when the name is taken by a user or an org; NotFound for the owner.
  virtual Result<OrgRecord> CreateOrg(const OrgRecord& org, int64_t owner_user_id) = 0;
  // Errors: NotFound when no org has that name.
  virtual Result<OrgRecord> FindOrgByName(std::string_view name) = 0;
  // Adds a member or changes an existing member's role (upsert). Errors: NotFound when the
  // org or user does not exist.
  virtual Result<void> AddMember(int64_t org_id, int64_t user_id, OrgRole role) = 0;
  // Errors: NotFound when the user is not a member.
  virtual Result<void> RemoveMember(int64_t org_id, int64_t user_id) = 0;
  // The user's role in the org called `org_name`; nullopt when not a member or no such org.
  virtual Result<std::optional<OrgRole>> MemberRole(std::string_view org_name, int64_t user_id) = 0;
  // The orgs the user belongs to, by org name.
  virtual Result<std::vector<OrgMembership>> ListOrgsOfUser(int64_t user_id) = 0;
  // The members of an org, by user name.
  virtual Result<std::vector<OrgMember>> ListMembers(int64_t org_id) = 0;

  // Whether `name` is a user, an org, or free.
  virtual Result<NamespaceKind> GetNamespaceKind(std::string_view name) = 0;

  // Inserts `token` (id ignored; created_at 0 means now) and returns it with its id.
  // Errors: Conflict when sha256_hex is already stored; NotFound for the user.
  virtual Result<TokenRecord> CreateToken(const TokenRecord& token) = 0;
  // The token whose text hashes to `sha256_hex`, revoked or not (the caller checks).
  // Errors: NotFound.
  virtual Result<TokenRecord> FindTokenByHash(std::string_view sha256_hex) = 0;
  // Records a use of the token at `unix_seconds`. Unknown ids are ignored.
  virtual Result<void> TouchToken(int64_t token_id, int64_t unix_seconds) = 0;
  // Marks the user's token revoked and returns it as it was stored (for cache eviction).
  // Errors: NotFound when the user has no such live token.
  virtual Result<TokenRecord> RevokeToken(int64_t user_id, int64_t token_id) = 0;
  // The user's tokens that are not revoked, oldest first.
  virtual Result<std::vector<TokenRecord>> ListTokens(int64_t user_id) = 0;

  // Sessions. Errors: Conflict when the id exists (a 256-bit collision: never in practice).
  virtual Result<void> CreateSession(const SessionRecord& session) = 0;
  // Errors: NotFound when there is no such session (expired ones are still returned: the
  // caller checks expires_at).
  virtual Result<SessionRecord> FindSession(std::string_view id_sha256) = 0;
  // Deletes one session; deleting a missing one is not an error.
  virtual Result<void> DeleteSession(std::string_view id_sha256) = 0;
  // Deletes sessions with expires_at <= now; returns how many.
  virtual Result<int64_t> DeleteExpiredSessions(int64_t now) = 0;
};

}  // namespace hangar::db

#pragma once
// SqlUserStore: UserStore over a Pool. Thread-safe.

#include <memory>

#include "db/sql/sql.h"
#include "db/user_store.h"

namespace hangar::db {

class SqlUserStore : public UserStore {
 public:
  explicit SqlUserStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<UserRecord> CreateUser(const UserRecord& user) override;
  Result<UserRecord> FindUserByName(std::string_view name) override;
  Result<UserRecord> FindUserById(int64_t id) override;
  Result<void> SetPasswordHash(int64_t user_id, const std::optional<std::string>& hash) override;
  Result<void> SetAdmin(int64_t user_id, bool is_admin) override;
  Result<OrgRecord> CreateOrg(const OrgRecord& org, int64_t owner_user_id) override;
  Result<OrgRecord> FindOrgByName(std::string_view name) override;
  Result<void> AddMember(int64_t org_id, int64_t user_id, OrgRole role) override;
  Result<void> RemoveMember(int64_t org_id, int64_t user_id) override;
  Result<std::optional<OrgRole>> MemberRole(std::string_view org_name, int64_t user_id) override;
  Result<std::vector<OrgMembership>> ListOrgsOfUser(int64_t user_id) override;
  Result<std::vector<OrgMember>> ListMembers(int64_t org_id) override;
  Result<NamespaceKind> GetNamespaceKind(std::string_view name) override;
  Result<TokenRecord> CreateToken(const TokenRecord& token) override;
  Result<TokenRecord> FindTokenByHash(std::string_view sha256_hex) override;
  Result<void> TouchToken(int64_t token_id, int64_t unix_seconds) override;
  Result<TokenRecord> RevokeToken(int64_t user_id, int64_t token_id) override;
  Result<std::vector<TokenRecord>> ListTokens(int64_t user_id) override;
  Result<void> CreateSession(const SessionRecord& session) override;
  Result<SessionRecord> FindSession(std::string_view id_sha256) override;
  Result<void> DeleteSession(std::string_view id_sha256) override;
  Result<int64_t> DeleteExpiredSessions(int64_t now) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

#include "db/sql/sql_user_store.h"

#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kUserCols[] = "id, name, fullname, email, is_admin, password_hash, created_at";
constexpr const char kTokenCols[] =
    "id, user_id, name, role, token_sha256, created_at, last_used_at, expires_at, revoked";

UserRecord ReadUser(const Stmt& s) {
  UserRecord u;
  u.id = s.Int(0);
  u.name = s.Text(1);
  u.fullname = s.Text(2);
  u.email = s.Text(3);
  u.is_admin = s.Int(4) != 0;
  u.password_hash = s.OptText(5);
  u.created_at = s.Int(6);
  return u;
}

TokenRecord ReadToken(const Stmt& s) {
  TokenRecord t;
  t.id = s.Int(0);
  t.user_id = s.Int(1);
  t.name = s.Text(2);
  t.role = ParseTokenRole(s.Text(3)).value_or(TokenRole::Read);
  t.sha256_hex = s.Text(4);
  t.created_at = s.Int(5);
  t.last_used_at = s.OptInt(6);
  t.expires_at = s.OptInt(7);
  t.revoked = s.Int(8) != 0;
  return t;
}

std::string Sql(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string s(a);
  s += b;
  s += c;
  return s;
}

// Runs a query expected to return at most one user row.
Result<UserRecord> OneUser(Stmt& s, std::string_view not_found) {
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return MakeError(ErrorCode::NotFound, std::string(not_found));
  return ReadUser(s);
}

// Inserts a users row of `kind`; Conflict when the name is taken by a user or an org.
Result<int64_t> InsertNamespaceRow(Connection& c, std::string_view kind, std::string_view name,
                                   std::string_view fullname, std::string_view email, bool is_admin,
                                   const std::optional<std::string>& password_hash,
                                   int64_t created_at) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c.Prepare(
          "INSERT INTO users (name, kind, fullname, email, is_admin, password_hash, created_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)"));
  s.Bind(1, name).Bind(2, kind).Bind(3, fullname).Bind(4, email);
  s.Bind(5, int64_t{is_admin ? 1 : 0}).Bind(6, password_hash).Bind(7, created_at);
  auto r = s.Run();
  if (!r) {
    if (r.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Conflict, "the name '" + std::string(name) + "' is taken");
    return std::move(r).error();
  }
  return c.LastInsertId();
}

Result<void> ExpectChanged(Connection& c, std::string_view not_found) {
  if (c.Changes() == 0) return MakeError(ErrorCode::NotFound, std::string(not_found));
  return {};
}

}  // namespace

Result<UserRecord> SqlUserStore::CreateUser(const UserRecord& user) {
  UserRecord out = user;
  if (out.created_at == 0) out.created_at = NowUnix();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto id, InsertNamespaceRow(*c, "user", out.name, out.fullname, out.email, out.is_admin,
                                  out.password_hash, out.created_at));
  out.id = id;
  return out;
}

Result<UserRecord> SqlUserStore::FindUserByName(std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Sql("SELECT ", kUserCols,
                                                 " FROM users WHERE name = ? AND kind = 'user'")));
  s.Bind(1, name);
  return OneUser(s, "user '" + std::string(name) + "' not found");
}

Result<UserRecord> SqlUserStore::FindUserById(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(Sql("SELECT ", kUserCols, " FROM users WHERE id = ? AND kind = 'user'")));
  s.Bind(1, id);
  return OneUser(s, "user #" + std::to_string(id) + " not found");
}

Result<void> SqlUserStore::SetPasswordHash(int64_t user_id,
                                           const std::optional<std::string>& hash) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("UPDATE users SET password_hash = ? WHERE id = ? AND kind = 'user'"));
  HANGAR_TRY(s.Bind(1, hash).Bind(2, user_id).Run());
  return ExpectChanged(*c, "user #" + std::to_string(user_id) + " not found");
}

Result<void> SqlUserStore::SetAdmin(int64_t user_id, bool is_admin) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("UPDATE users SET is_admin = ? WHERE id = ? AND kind = 'user'"));
  HANGAR_TRY(s.Bind(1, int64_t{is_admin ? 1 : 0}).Bind(2, user_id).Run());
  return ExpectChanged(*c, "user #" + std::to_string(user_id) + " not found");
}

Result<OrgRecord> SqlUserStore::CreateOrg(const OrgRecord& org, int64_t owner_user_id) {
  OrgRecord out = org;
  if (out.created_at == 0) out.created_at = NowUnix();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<OrgRecord> {
    HANGAR_ASSIGN_OR_RETURN(auto id, InsertNamespaceRow(*c, "org", out.name, out.fullname, "",
                                                        false, std::nullopt, out.created_at));
    out.id = id;
    if (owner_user_id != 0) {
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("INSERT INTO org_members (org_id, user_id, role) "
                             "SELECT ?, id, 'admin' FROM users WHERE id = ? AND kind = 'user'"));
      HANGAR_TRY(s.Bind(1, out.id).Bind(2, owner_user_id).Run());
      HANGAR_TRY(ExpectChanged(*c, "user #" + std::to_string(owner_user_id) + " not found"));
    }
    return out;
  });
}

Result<OrgRecord> SqlUserStore::FindOrgByName(std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "SELECT id, name, fullname, created_at FROM users WHERE name = ? AND kind = 'org'"));
  s.Bind(1, name);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row)
    return MakeError(ErrorCode::NotFound, "organization '" + std::string(name) + "' not found");
  return OrgRecord{s.Int(0), s.Text(1), s.Text(2), s.Int(3)};
}

Result<void> SqlUserStore::AddMember(int64_t org_id, int64_t user_id, OrgRole role) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // The SELECT checks both kinds, so a user can't be "added" to another user.
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO org_members (org_id, user_id, role) "
                         "SELECT o.id, u.id, ? FROM users o, users u "
                         "WHERE o.id = ? AND o.kind = 'org' AND u.id = ? AND u.kind = 'user' "
                         "ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role"));
  HANGAR_TRY(s.Bind(1, OrgRoleName(role)).Bind(2, org_id).Bind(3, user_id).Run());
  return ExpectChanged(*c, "organization or user not found");
}

Result<void> SqlUserStore::RemoveMember(int64_t org_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("DELETE FROM org_members WHERE org_id = ? AND user_id = ?"));
  HANGAR_TRY(s.Bind(1, org_id).Bind(2, user_id).Run());
  return ExpectChanged(*c, "user #" + std::to_string(user_id) + " is not a member");
}

Result<std::optional<OrgRole>> SqlUserStore::MemberRole(std::string_view org_name,
                                                        int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT m.role FROM org_members m JOIN users o ON o.id = m.org_id "
                         "WHERE o.name = ? AND o.kind = 'org' AND m.user_id = ?"));
  s.Bind(1, org_name).Bind(2, user_id);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<OrgRole>();
  return ParseOrgRole(s.Text(0));
}

Result<std::vector<OrgMembership>> SqlUserStore::ListOrgsOfUser(int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT o.id, o.name, o.fullname, o.created_at, m.role FROM org_members m "
                         "JOIN users o ON o.id = m.org_id WHERE m.user_id = ? ORDER BY o.name"));
  s.Bind(1, user_id);
  std::vector<OrgMembership> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back({OrgRecord{s.Int(0), s.Text(1), s.Text(2), s.Int(3)},
                   ParseOrgRole(s.Text(4)).value_or(OrgRole::Read)});
  }
  return out;
}

Result<std::vector<OrgMember>> SqlUserStore::ListMembers(int64_t org_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("SELECT u.id, u.name, m.role FROM org_members m JOIN users u ON u.id = m.user_id "
                 "WHERE m.org_id = ? ORDER BY u.name"));
  s.Bind(1, org_id);
  std::vector<OrgMember> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back({s.Int(0), s.Text(1), ParseOrgRole(s.Text(2)).value_or(OrgRole::Read)});
  }
  return out;
}

Result<NamespaceKind> SqlUserStore::GetNamespaceKind(std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT kind FROM users WHERE name = ?"));
  s.Bind(1, name);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return NamespaceKind::None;
  return s.Text(0) == "org" ? NamespaceKind::Org : NamespaceKind::User;
}

Result<TokenRecord> SqlUserStore::CreateToken(const TokenRecord& token) {
  TokenRecord out = token;
  out.revoked = false;
  if (out.created_at == 0) out.created_at = NowUnix();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("INSERT INTO tokens (user_id, name, role, token_sha256, created_at, last_used_at, "
                 "expires_at, revoked) SELECT id, ?, ?, ?, ?, ?, ?, 0 FROM users "
                 "WHERE id = ? AND kind = 'user'"));
  s.Bind(1, out.name).Bind(2, TokenRoleName(out.role)).Bind(3, out.sha256_hex);
  s.Bind(4, out.created_at).Bind(5, out.last_used_at).Bind(6, out.expires_at);
  s.Bind(7, out.user_id);
  auto r = s.Run();
  if (!r) {
    if (r.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Conflict, "a token with this hash already exists");
    return std::move(r).error();
  }
  HANGAR_TRY(ExpectChanged(*c, "user #" + std::to_string(out.user_id) + " not found"));
  HANGAR_ASSIGN_OR_RETURN(out.id, c->LastInsertId());
  return out;
}

Result<TokenRecord> SqlUserStore::FindTokenByHash(std::string_view sha256_hex) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(Sql("SELECT ", kTokenCols, " FROM tokens WHERE token_sha256 = ?")));
  s.Bind(1, sha256_hex);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return MakeError(ErrorCode::NotFound, "token not found");
  return ReadToken(s);
}

Result<void> SqlUserStore::TouchToken(int64_t token_id, int64_t unix_seconds) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE tokens SET last_used_at = ? WHERE id = ?"));
  return s.Bind(1, unix_seconds).Bind(2, token_id).Run();
}

Result<TokenRecord> SqlUserStore::RevokeToken(int64_t user_id, int64_t token_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<TokenRecord> {
    TokenRecord t;
    {
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare(Sql("SELECT ", kTokenCols,
                                 " FROM tokens WHERE id = ? AND user_id = ? AND revoked = 0")));
      s.Bind(1, token_id).Bind(2, user_id);
      HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
      if (!row)
        return MakeError(ErrorCode::NotFound, "token #" + std::to_string(token_id) + " not found");
      t = ReadToken(s);
    }
    HANGAR_ASSIGN_OR_RETURN(auto u, c->Prepare("UPDATE tokens SET revoked = 1 WHERE id = ?"));
    HANGAR_TRY(u.Bind(1, token_id).Run());
    return t;
  });
}

Result<std::vector<TokenRecord>> SqlUserStore::ListTokens(int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(Sql("SELECT ", kTokenCols,
                             " FROM tokens WHERE user_id = ? AND revoked = 0 ORDER BY id")));
  s.Bind(1, user_id);
  std::vector<TokenRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back(ReadToken(s));
  }
  return out;
}

Result<void> SqlUserStore::CreateSession(const SessionRecord& session) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO sessions (id_sha256, user_id, csrf, created_at, expires_at) "
                         "VALUES (?, ?, ?, ?, ?)"));
  s.Bind(1, session.id_sha256).Bind(2, session.user_id).Bind(3, session.csrf);
  s.Bind(4, session.created_at).Bind(5, session.expires_at);
  return s.Run();
}

Result<SessionRecord> SqlUserStore::FindSession(std::string_view id_sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT id_sha256, user_id, csrf, created_at, expires_at "
                                     "FROM sessions WHERE id_sha256 = ?"));
  s.Bind(1, id_sha256);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return MakeError(ErrorCode::NotFound, "session not found");
  return SessionRecord{s.Text(0), s.Int(1), s.Text(2), s.Int(3), s.Int(4)};
}

Result<void> SqlUserStore::DeleteSession(std::string_view id_sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM sessions WHERE id_sha256 = ?"));
  return s.Bind(1, id_sha256).Run();
}

Result<int64_t> SqlUserStore::DeleteExpiredSessions(int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM sessions WHERE expires_at <= ?"));
  HANGAR_TRY(s.Bind(1, now).Run());
  return int64_t{c->Changes()};
}

}  // namespace hangar::db

#include "db/sql/sql_ssh_key_store.h"

#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kColumns[] =
    "id, user_id, repo_id, read_write, title, key_type, blob_base64, fingerprint, created_at, "
    "last_used_at";

SshKeyRecord ReadRow(const Stmt& s) {
  SshKeyRecord k;
  k.id = s.Int(0);
  k.user_id = s.OptInt(1).value_or(0);
  k.repo_id = s.OptInt(2).value_or(0);
  k.read_write = s.Int(3) != 0;
  k.title = s.Text(4);
  k.key_type = s.Text(5);
  k.blob_base64 = s.Text(6);
  k.fingerprint = s.Text(7);
  k.created_at = s.Int(8);
  k.last_used_at = s.OptInt(9);
  return k;
}

std::string Select(std::string_view where) {
  return std::string("SELECT ") + kColumns + " FROM ssh_keys " + std::string(where);
}

Result<SshKeyRecord> One(Stmt& s, std::string_view not_found) {
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return MakeError(ErrorCode::NotFound, std::string(not_found));
  return ReadRow(s);
}

Result<std::vector<SshKeyRecord>> All(Stmt& s) {
  std::vector<SshKeyRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadRow(s));
  }
}

}  // namespace

Result<SshKeyRecord> SqlSshKeyStore::Add(const SshKeyRecord& key) {
  if ((key.user_id == 0) == (key.repo_id == 0)) {
    return MakeError(ErrorCode::Internal, "an SSH key belongs to one user or to one repo");
  }
  SshKeyRecord out = key;
  if (out.created_at == 0) out.created_at = NowUnix();
  out.last_used_at.reset();
  if (out.user_id != 0) out.read_write = false;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // The owner's row is read by the insert itself, so a user or repo deleted meanwhile
  // inserts nothing (NotFound) rather than failing on the foreign key.
  const bool user_key = out.user_id != 0;
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(user_key ? "INSERT INTO ssh_keys (user_id, read_write, title, key_type, "
                                    "blob_base64, fingerprint, created_at) SELECT id, ?, ?, ?, ?, "
                                    "?, ? FROM users WHERE id = ? AND kind = 'user'"
                                  : "INSERT INTO ssh_keys (repo_id, read_write, title, key_type, "
                                    "blob_base64, fingerprint, created_at) SELECT id, ?, ?, ?, ?, "
                                    "?, ? FROM repos WHERE id = ?"));
  s.Bind(1, int64_t{out.read_write ? 1 : 0})
      .Bind(2, out.title)
      .Bind(3, out.key_type)
      .Bind(4, out.blob_base64)
      .Bind(5, out.fingerprint)
      .Bind(6, out.created_at)
      .Bind(7, user_key ? out.user_id : out.repo_id);
  if (auto r = s.Run(); !r) {
    // The fingerprint is the one unique column besides the id.
    if (r.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Conflict, "key is already in use");
    return std::move(r).error();
  }
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::NotFound,
                     user_key ? "user #" + std::to_string(out.user_id) + " not found"
                              : "repository #" + std::to_string(out.repo_id) + " not found");
  }
  HANGAR_ASSIGN_OR_RETURN(out.id, c->LastInsertId());
  return out;
}

Result<SshKeyRecord> SqlSshKeyStore::Get(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Select("WHERE id = ?")));
  s.Bind(1, id);
  return One(s, "SSH key #" + std::to_string(id) + " not found");
}

Result<SshKeyRecord> SqlSshKeyStore::FindByBlob(std::string_view key_type,
                                                std::string_view blob_base64) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Select("WHERE key_type = ? AND blob_base64 = ?")));
  s.Bind(1, key_type).Bind(2, blob_base64);
  return One(s, "no such SSH key");
}

Result<std::vector<SshKeyRecord>> SqlSshKeyStore::ListForUser(int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Select("WHERE user_id = ? ORDER BY id")));
  s.Bind(1, user_id);
  return All(s);
}

Result<std::vector<SshKeyRecord>> SqlSshKeyStore::ListForRepo(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Select("WHERE repo_id = ? ORDER BY id")));
  s.Bind(1, repo_id);
  return All(s);
}

Result<void> SqlSshKeyStore::Delete(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM ssh_keys WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, id).Run());
  if (c->Changes() == 0)
    return MakeError(ErrorCode::NotFound, "SSH key #" + std::to_string(id) + " not found");
  return {};
}

Result<void> SqlSshKeyStore::Touch(int64_t id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE ssh_keys SET last_used_at = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, now).Bind(2, id).Run());
  if (c->Changes() == 0)
    return MakeError(ErrorCode::NotFound, "SSH key #" + std::to_string(id) + " not found");
  return {};
}

}  // namespace hangar::db

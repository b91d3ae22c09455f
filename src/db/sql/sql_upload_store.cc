#include "db/sql/sql_upload_store.h"

#include <algorithm>

namespace hangar::db {
namespace {

constexpr const char kColumns[] =
    "id, repo_id, user_id, sha256, size, part_size, store_handle, created_at, expires_at, "
    "completed_at";

Result<UploadRecord> ReadRow(Stmt& s) {
  UploadRecord u;
  u.id = s.Text(0);
  u.repo_id = s.Int(1);
  u.user_id = s.Int(2);
  auto sha = Sha256::ParseHex(s.Text(3));
  if (!sha) return MakeError(ErrorCode::Internal, "corrupt sha256 in uploads row " + u.id);
  u.sha256 = *sha;
  u.size = static_cast<uint64_t>(s.Int(4));
  u.part_size = static_cast<uint64_t>(s.Int(5));
  u.store_handle = s.Text(6);
  u.created_at = s.Int(7);
  u.expires_at = s.Int(8);
  if (!s.IsNull(9)) u.completed_at = s.Int(9);
  return u;
}

Result<std::optional<UploadRecord>> ReadOne(Stmt& s) {
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<UploadRecord>();
  HANGAR_ASSIGN_OR_RETURN(auto u, ReadRow(s));
  return std::optional<UploadRecord>(std::move(u));
}

}  // namespace

Result<void> SqlUploadStore::Create(const UploadRecord& u) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto found, c->Prepare("SELECT 1 FROM uploads WHERE id = ?"));
  found.Bind(1, u.id);
  HANGAR_ASSIGN_OR_RETURN(auto exists, found.Step());
  if (exists) return MakeError(ErrorCode::Conflict, "upload " + u.id + " exists");
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "INSERT INTO uploads (id, repo_id, user_id, sha256, size, part_size, store_handle, "
          "created_at, expires_at) SELECT ?, id, ?, ?, ?, ?, ?, ?, ? FROM repos WHERE id = ?"));
  s.Bind(1, u.id)
      .Bind(2, u.user_id)
      .Bind(3, u.sha256.Hex())
      .Bind(4, static_cast<int64_t>(u.size))
      .Bind(5, static_cast<int64_t>(u.part_size))
      .Bind(6, u.store_handle)
      .Bind(7, u.created_at)
      .Bind(8, u.expires_at)
      .Bind(9, u.repo_id);
  HANGAR_TRY(s.Run());
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::RepoNotFound,
                     "repository #" + std::to_string(u.repo_id) + " not found");
  }
  return {};
}

Result<std::optional<UploadRecord>> SqlUploadStore::Get(const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string("SELECT ") + kColumns + " FROM uploads WHERE id = ?"));
  s.Bind(1, id);
  return ReadOne(s);
}

Result<std::optional<UploadRecord>> SqlUploadStore::FindOpen(int64_t repo_id, int64_t user_id,
                                                             const Sha256& sha256, uint64_t size,
                                                             int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(std::string("SELECT ") + kColumns +
                 " FROM uploads WHERE repo_id = ? AND user_id = ? AND sha256 = ? AND size = ? "
                 "AND completed_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1"));
  s.Bind(1, repo_id)
      .Bind(2, user_id)
      .Bind(3, sha256.Hex())
      .Bind(4, static_cast<int64_t>(size))
      .Bind(5, now);
  return ReadOne(s);
}

Result<int64_t> SqlUploadStore::CountOpen(int64_t user_id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT COUNT(*) FROM uploads WHERE user_id = ? AND "
                                             "completed_at IS NULL AND expires_at > ?"));
  s.Bind(1, user_id).Bind(2, now);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  (void)row;
  return s.Int(0);
}

Result<void> SqlUploadStore::SetExpiry(const std::string& id, int64_t expires_at) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE uploads SET expires_at = ? WHERE id = ?"));
  return s.Bind(1, expires_at).Bind(2, id).Run();
}

Result<void> SqlUploadStore::MarkCompleted(const std::string& id, int64_t when,
                                           int64_t expires_at) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("UPDATE uploads SET completed_at = ?, expires_at = ? WHERE id = ?"));
  return s.Bind(1, when).Bind(2, expires_at).Bind(3, id).Run();
}

Result<void> SqlUploadStore::Delete(const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM uploads WHERE id = ?"));
  return s.Bind(1, id).Run();
}

Result<std::vector<UploadRecord>> SqlUploadStore::ListExpired(int64_t now, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(std::string("SELECT ") + kColumns +
                                             " FROM uploads WHERE expires_at < ? "
                                             "ORDER BY expires_at LIMIT ?"));
  s.Bind(1, now).Bind(2, int64_t{std::clamp(limit, 1, 100000)});
  std::vector<UploadRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    HANGAR_ASSIGN_OR_RETURN(auto u, ReadRow(s));
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace hangar::db

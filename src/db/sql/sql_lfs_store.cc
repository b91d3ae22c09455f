#include "db/sql/sql_lfs_store.h"

#include <algorithm>

namespace hangar::db {

Result<void> SqlLfsStore::Link(int64_t repo_id, const Sha256& oid, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // INSERT ... SELECT from repos turns a missing repo into "0 rows" instead of an FK error.
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "INSERT INTO lfs_links (repo_id, sha256, size) SELECT id, ?, ? FROM repos WHERE id = ? "
          "ON CONFLICT (repo_id, sha256) DO UPDATE SET size = excluded.size"));
  HANGAR_TRY(s.Bind(1, oid.Hex()).Bind(2, static_cast<int64_t>(size)).Bind(3, repo_id).Run());
  if (c->Changes() == 0)
    return MakeError(ErrorCode::RepoNotFound,
                     "repository #" + std::to_string(repo_id) + " not found");
  return {};
}

Result<std::optional<uint64_t>> SqlLfsStore::IsLinked(int64_t repo_id, const Sha256& oid) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT size FROM lfs_links WHERE repo_id = ? AND sha256 = ?"));
  s.Bind(1, repo_id).Bind(2, oid.Hex());
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<uint64_t>();
  return std::optional<uint64_t>(static_cast<uint64_t>(s.Int(0)));
}

Result<void> SqlLfsStore::Unlink(int64_t repo_id, const Sha256& oid) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("DELETE FROM lfs_links WHERE repo_id = ? AND sha256 = ?"));
  return s.Bind(1, repo_id).Bind(2, oid.Hex()).Run();
}

Result<std::vector<LfsLink>> SqlLfsStore::ListForRepo(int64_t repo_id, std::optional<Sha256> after,
                                                      int limit) {
  limit = std::clamp(limit, 1, 100000);
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT sha256, size FROM lfs_links WHERE repo_id = ? AND sha256 > ? "
                         "ORDER BY sha256 LIMIT ?"));
  s.Bind(1, repo_id).Bind(2, after ? after->Hex() : std::string()).Bind(3, int64_t{limit});
  std::vector<LfsLink> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    auto oid = Sha256::ParseHex(s.Text(0));
    if (!oid) return MakeError(ErrorCode::Internal, "corrupt sha256 in lfs_links");
    out.push_back({*oid, static_cast<uint64_t>(s.Int(1))});
  }
  return out;
}

Result<int64_t> SqlLfsStore::CountLinks(const Sha256& oid) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // OCI blob links count too: LFS objects and OCI blobs share the store (DESIGN.md).
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT (SELECT COUNT(*) FROM lfs_links WHERE sha256 = ?) + "
                                     "(SELECT COUNT(*) FROM oci_blob_links WHERE sha256 = ?)"));
  s.Bind(1, oid.Hex()).Bind(2, oid.Hex());
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  (void)row;
  return s.Int(0);
}

}  // namespace hangar::db

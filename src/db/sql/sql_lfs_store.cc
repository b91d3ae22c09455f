#include "db/sql/sql_lfs_store.h"

#include <ctime>

#include <algorithm>

namespace hangar::db {

Result<void> SqlLfsStore::Link(int64_t repo_id, const Sha256& oid, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // INSERT ... SELECT from repos turns a missing repo into "0 rows" instead of an FK error.
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "INSERT INTO lfs_links (repo_id, sha256, size, created_at) SELECT id, ?, ?, ? FROM repos "
          "WHERE id = ? ON CONFLICT (repo_id, sha256) DO UPDATE SET size = excluded.size"));
  HANGAR_TRY(s.Bind(1, oid.Hex())
                 .Bind(2, static_cast<int64_t>(size))
                 .Bind(3, static_cast<int64_t>(std::time(nullptr)))
                 .Bind(4, repo_id)
                 .Run());
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
      auto s, c->Prepare("SELECT sha256, size, created_at FROM lfs_links WHERE repo_id = ? AND "
                         "sha256 > ? "
                         "ORDER BY sha256 LIMIT ?"));
  s.Bind(1, repo_id).Bind(2, after ? after->Hex() : std::string()).Bind(3, int64_t{limit});
  std::vector<LfsLink> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    auto oid = Sha256::ParseHex(s.Text(0));
    if (!oid) return MakeError(ErrorCode::Internal, "corrupt sha256 in lfs_links");
    out.push_back({*oid, static_cast<uint64_t>(s.Int(1)), s.Int(2)});
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

Result<int64_t> SqlLfsStore::RecordPurge(const LfsPurgeRecord& purge) {
  std::string oids;
  for (const auto& o : purge.oids) oids += (oids.empty() ? "" : " ") + o.Hex();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO lfs_purges (repo_id, user_name, oids, rewrite, refs, "
                         "created_at) SELECT id, ?, ?, ?, ?, ? FROM repos WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, purge.user_name)
                 .Bind(2, oids)
                 .Bind(3, int64_t{purge.rewrite ? 1 : 0})
                 .Bind(4, purge.refs)
                 .Bind(5, purge.created_at)
                 .Bind(6, purge.repo_id)
                 .Run());
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::RepoNotFound,
                     "repository #" + std::to_string(purge.repo_id) + " not found");
  }
  return c->LastInsertId();
}

Result<std::vector<LfsPurgeRecord>> SqlLfsStore::ListPurges(int64_t repo_id, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT id, user_name, oids, rewrite, refs, created_at FROM lfs_purges "
                         "WHERE repo_id = ? ORDER BY id DESC LIMIT ?"));
  s.Bind(1, repo_id).Bind(2, int64_t{std::clamp(limit, 1, 1000)});
  std::vector<LfsPurgeRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    LfsPurgeRecord p;
    p.id = s.Int(0);
    p.repo_id = repo_id;
    p.user_name = s.Text(1);
    const std::string oids = s.Text(2);
    for (size_t pos = 0; pos < oids.size();) {
      size_t sp = oids.find(' ', pos);
      if (sp == std::string::npos) sp = oids.size();
      if (auto o = Sha256::ParseHex(std::string_view(oids).substr(pos, sp - pos))) {
        p.oids.push_back(*o);
      }
      pos = sp + 1;
    }
    p.rewrite = s.Int(3) != 0;
    p.refs = s.Text(4);
    p.created_at = s.Int(5);
    out.push_back(std::move(p));
  }
}

}  // namespace hangar::db

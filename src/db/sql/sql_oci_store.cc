#include "db/sql/sql_oci_store.h"

#include <algorithm>

namespace hangar::db {
namespace {

constexpr const char kManifestCols[] =
    "repo_id, digest, media_type, body, subject, artifact_type, annotations, created_at";

OciManifestRecord ReadManifest(const Stmt& s) {
  OciManifestRecord m;
  m.repo_id = s.Int(0);
  m.digest = s.Text(1);
  m.media_type = s.Text(2);
  m.body = s.Text(3);
  m.subject = s.Text(4);
  m.artifact_type = s.Text(5);
  m.annotations_json = s.Text(6);
  m.created_at = s.Int(7);
  return m;
}

Error RepoMissing(int64_t repo_id) {
  return MakeError(ErrorCode::RepoNotFound,
                   "repository #" + std::to_string(repo_id) + " not found");
}

Result<OciGitBlob> ReadGitBlob(const Stmt& s) {
  OciGitBlob b;
  b.git_oid = s.Text(0);
  auto sha = Sha256::ParseHex(s.Text(1));
  if (!sha) return MakeError(ErrorCode::Internal, "corrupt sha256 in oci_git_blobs");
  b.sha256 = *sha;
  b.size = static_cast<uint64_t>(s.Int(2));
  return b;
}

Result<std::optional<OciGitBlob>> ReadOptGitBlob(Stmt& s) {
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<OciGitBlob>();
  HANGAR_ASSIGN_OR_RETURN(auto b, ReadGitBlob(s));
  return std::optional<OciGitBlob>(std::move(b));
}

}  // namespace

Result<void> SqlOciStore::PutManifest(const OciManifestRecord& m,
                                      const std::vector<OciManifestRef>& refs) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    // INSERT ... SELECT from repos: a missing repo inserts nothing instead of an FK error.
    HANGAR_ASSIGN_OR_RETURN(
        auto s,
        c->Prepare(
            "INSERT INTO oci_manifests (repo_id, digest, media_type, body, size, subject, "
            "artifact_type, annotations, created_at) SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM repos "
            "WHERE id = ? ON CONFLICT (repo_id, digest) DO NOTHING"));
    s.Bind(1, m.digest)
        .Bind(2, m.media_type)
        .Bind(3, m.body)
        .Bind(4, static_cast<int64_t>(m.body.size()))
        .Bind(5, m.subject)
        .Bind(6, m.artifact_type)
        .Bind(7, m.annotations_json)
        .Bind(8, m.created_at)
        .Bind(9, m.repo_id);
    HANGAR_TRY(s.Run());
    if (c->Changes() == 0) {
      // Either the repo is missing or the manifest is already stored (first row kept).
      HANGAR_ASSIGN_OR_RETURN(auto q, c->Prepare("SELECT 1 FROM repos WHERE id = ?"));
      q.Bind(1, m.repo_id);
      HANGAR_ASSIGN_OR_RETURN(auto found, q.Step());
      if (!found) return RepoMissing(m.repo_id);
      return {};
    }
    for (const auto& ref : refs) {
      // A statement per row: Stmt resets when destroyed, not after Run().
      HANGAR_ASSIGN_OR_RETURN(
          auto r,
          c->Prepare(
              "INSERT INTO oci_refs (repo_id, manifest, ref, is_manifest) VALUES (?, ?, ?, ?) "
              "ON CONFLICT (repo_id, manifest, ref) DO NOTHING"));
      HANGAR_TRY(r.Bind(1, m.repo_id)
                     .Bind(2, m.digest)
                     .Bind(3, ref.digest)
                     .Bind(4, int64_t{ref.is_manifest ? 1 : 0})
                     .Run());
    }
    return {};
  });
}

Result<std::optional<OciManifestRecord>> SqlOciStore::GetManifest(int64_t repo_id,
                                                                  std::string_view digest) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  static const std::string kSql = std::string("SELECT ") + kManifestCols +
                                  " FROM oci_manifests WHERE repo_id = ? AND digest = ?";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, repo_id).Bind(2, digest);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<OciManifestRecord>();
  return std::optional<OciManifestRecord>(ReadManifest(s));
}

Result<bool> SqlOciStore::DeleteManifest(int64_t repo_id, std::string_view digest) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("DELETE FROM oci_manifests WHERE repo_id = ? AND digest = ?"));
    HANGAR_TRY(s.Bind(1, repo_id).Bind(2, digest).Run());
    if (c->Changes() == 0) return false;
    HANGAR_ASSIGN_OR_RETURN(auto t,
                            c->Prepare("DELETE FROM oci_tags WHERE repo_id = ? AND digest = ?"));
    HANGAR_TRY(t.Bind(1, repo_id).Bind(2, digest).Run());
    HANGAR_ASSIGN_OR_RETURN(auto r,
                            c->Prepare("DELETE FROM oci_refs WHERE repo_id = ? AND manifest = ?"));
    HANGAR_TRY(r.Bind(1, repo_id).Bind(2, digest).Run());
    return true;
  });
}

Result<void> SqlOciStore::PutTag(int64_t repo_id, std::string_view tag, std::string_view digest,
                                 int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // The SELECT makes a missing manifest insert nothing; one statement, so atomic.
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("INSERT INTO oci_tags (repo_id, tag, digest, updated_at) "
                 "SELECT repo_id, ?, digest, ? FROM oci_manifests WHERE repo_id = ? AND digest = ? "
                 "ON CONFLICT (repo_id, tag) DO UPDATE SET digest = excluded.digest, "
                 "updated_at = excluded.updated_at"));
  HANGAR_TRY(s.Bind(1, tag).Bind(2, now).Bind(3, repo_id).Bind(4, digest).Run());
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::ManifestUnknown,
                     "manifest " + std::string(digest) + " is not in the repository");
  }
  return {};
}

Result<std::optional<std::string>> SqlOciStore::GetTag(int64_t repo_id, std::string_view tag) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT digest FROM oci_tags WHERE repo_id = ? AND tag = ?"));
  s.Bind(1, repo_id).Bind(2, tag);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

Result<std::vector<std::string>> SqlOciStore::ListTags(int64_t repo_id, std::string_view after,
                                                       int limit) {
  limit = std::clamp(limit, 0, 100000);
  std::vector<std::string> out;
  if (limit == 0) return out;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // Tags are ASCII, so SQLite's BINARY collation is byte order (oci.md §6.1).
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("SELECT tag FROM oci_tags WHERE repo_id = ? AND tag > ? ORDER BY tag LIMIT ?"));
  s.Bind(1, repo_id).Bind(2, after).Bind(3, int64_t{limit});
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back(s.Text(0));
  }
  return out;
}

Result<bool> SqlOciStore::DeleteTag(int64_t repo_id, std::string_view tag) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM oci_tags WHERE repo_id = ? AND tag = ?"));
  HANGAR_TRY(s.Bind(1, repo_id).Bind(2, tag).Run());
  return c->Changes() > 0;
}

Result<std::vector<OciReferrer>> SqlOciStore::ListReferrers(int64_t repo_id,
                                                            std::string_view subject,
                                                            std::string_view artifact_type,
                                                            std::string_view after, int limit) {
  limit = std::clamp(limit, 0, 100000);
  std::vector<OciReferrer> out;
  if (limit == 0 || subject.empty()) return out;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "SELECT digest, media_type, size, artifact_type, annotations FROM oci_manifests "
          "WHERE repo_id = ? AND subject = ? AND digest > ? AND (? = '' OR artifact_type = ?) "
          "ORDER BY digest LIMIT ?"));
  s.Bind(1, repo_id)
      .Bind(2, subject)
      .Bind(3, after)
      .Bind(4, artifact_type)
      .Bind(5, artifact_type)
      .Bind(6, int64_t{limit});
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back(
        OciReferrer{s.Text(0), s.Text(1), static_cast<uint64_t>(s.Int(2)), s.Text(3), s.Text(4)});
  }
  return out;
}

Result<int64_t> SqlOciStore::CountReferences(int64_t repo_id, std::string_view digest) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT COUNT(*) FROM oci_refs WHERE repo_id = ? AND ref = ?"));
  s.Bind(1, repo_id).Bind(2, digest);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  (void)row;
  return s.Int(0);
}

Result<void> SqlOciStore::LinkBlob(int64_t repo_id, const Sha256& sha256, uint64_t size,
                                   int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("INSERT INTO oci_blob_links (repo_id, sha256, size, linked_at) "
                 "SELECT id, ?, ?, ? FROM repos WHERE id = ? "
                 "ON CONFLICT (repo_id, sha256) DO UPDATE SET linked_at = excluded.linked_at"));
  HANGAR_TRY(s.Bind(1, sha256.Hex())
                 .Bind(2, static_cast<int64_t>(size))
                 .Bind(3, now)
                 .Bind(4, repo_id)
                 .Run());
  if (c->Changes() == 0) return RepoMissing(repo_id);
  return {};
}

Result<std::optional<uint64_t>> SqlOciStore::BlobLinked(int64_t repo_id, const Sha256& sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT size FROM oci_blob_links WHERE repo_id = ? AND sha256 = ?"));
  s.Bind(1, repo_id).Bind(2, sha256.Hex());
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<uint64_t>();
  return std::optional<uint64_t>(static_cast<uint64_t>(s.Int(0)));
}

Result<bool> SqlOciStore::UnlinkBlob(int64_t repo_id, const Sha256& sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("DELETE FROM oci_blob_links WHERE repo_id = ? AND sha256 = ?"));
  HANGAR_TRY(s.Bind(1, repo_id).Bind(2, sha256.Hex()).Run());
  return c->Changes() > 0;
}

Result<int64_t> SqlOciStore::PruneUnreferencedLinks(int64_t linked_before) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // A link stays while a manifest of its repo references the blob by its sha256 digest or
  // by an alias (a sha512 digest naming the same bytes).
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare(
          "DELETE FROM oci_blob_links WHERE linked_at < ? "
          "AND NOT EXISTS (SELECT 1 FROM oci_refs r WHERE r.repo_id = oci_blob_links.repo_id "
          "AND r.ref = 'sha256:' || oci_blob_links.sha256) "
          "AND NOT EXISTS (SELECT 1 FROM oci_aliases a JOIN oci_refs r ON r.ref = a.digest "
          "WHERE a.sha256 = oci_blob_links.sha256 AND r.repo_id = oci_blob_links.repo_id)"));
  HANGAR_TRY(s.Bind(1, linked_before).Run());
  return static_cast<int64_t>(c->Changes());
}

Result<void> SqlOciStore::PutAlias(std::string_view digest, const Sha256& sha256, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO oci_aliases (digest, sha256, size) VALUES (?, ?, ?) "
                         "ON CONFLICT (digest) DO NOTHING"));
  return s.Bind(1, digest).Bind(2, sha256.Hex()).Bind(3, static_cast<int64_t>(size)).Run();
}

Result<std::optional<std::pair<Sha256, uint64_t>>> SqlOciStore::FindAlias(std::string_view digest) {
  using Out = std::optional<std::pair<Sha256, uint64_t>>;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT sha256, size FROM oci_aliases WHERE digest = ?"));
  s.Bind(1, digest);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return Out();
  auto sha = Sha256::ParseHex(s.Text(0));
  if (!sha) return MakeError(ErrorCode::Internal, "corrupt sha256 in oci_aliases");
  return Out(std::pair(*sha, static_cast<uint64_t>(s.Int(1))));
}

Result<void> SqlOciStore::PutGitBlob(const OciGitBlob& blob) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO oci_git_blobs (git_oid, sha256, size) VALUES (?, ?, ?) "
                         "ON CONFLICT (git_oid) DO NOTHING"));
  return s.Bind(1, blob.git_oid)
      .Bind(2, blob.sha256.Hex())
      .Bind(3, static_cast<int64_t>(blob.size))
      .Run();
}

Result<std::optional<OciGitBlob>> SqlOciStore::FindGitBlobByOid(std::string_view git_oid) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT git_oid, sha256, size FROM oci_git_blobs WHERE git_oid = ?"));
  s.Bind(1, git_oid);
  return ReadOptGitBlob(s);
}

Result<std::optional<OciGitBlob>> SqlOciStore::FindGitBlobBySha256(const Sha256& sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("SELECT git_oid, sha256, size FROM oci_git_blobs WHERE sha256 = ? LIMIT 1"));
  s.Bind(1, sha256.Hex());
  return ReadOptGitBlob(s);
}

}  // namespace hangar::db

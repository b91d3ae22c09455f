#pragma once
// SqlOciStore: OciStore over a Pool (tables of migration 5). Thread-safe.

#include <memory>

#include "db/oci_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlOciStore : public OciStore {
 public:
  explicit SqlOciStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<void> PutManifest(const OciManifestRecord& m,
                           const std::vector<OciManifestRef>& refs) override;
  Result<std::optional<OciManifestRecord>> GetManifest(int64_t repo_id,
                                                       std::string_view digest) override;
  Result<bool> DeleteManifest(int64_t repo_id, std::string_view digest) override;
  Result<void> PutTag(int64_t repo_id, std::string_view tag, std::string_view digest,
                      int64_t now) override;
  Result<std::optional<std::string>> GetTag(int64_t repo_id, std::string_view tag) override;
  Result<std::vector<std::string>> ListTags(int64_t repo_id, std::string_view after,
                                            int limit) override;
  Result<bool> DeleteTag(int64_t repo_id, std::string_view tag) override;
  Result<std::vector<OciReferrer>> ListReferrers(int64_t repo_id, std::string_view subject,
                                                 std::string_view artifact_type,
                                                 std::string_view after, int limit) override;
  Result<int64_t> CountReferences(int64_t repo_id, std::string_view digest) override;

  Result<void> LinkBlob(int64_t repo_id, const Sha256& sha256, uint64_t size, int64_t now) override;
  Result<std::optional<uint64_t>> BlobLinked(int64_t repo_id, const Sha256& sha256) override;
  Result<bool> UnlinkBlob(int64_t repo_id, const Sha256& sha256) override;
  Result<int64_t> PruneUnreferencedLinks(int64_t linked_before) override;

  Result<void> PutAlias(std::string_view digest, const Sha256& sha256, uint64_t size) override;
  Result<std::optional<std::pair<Sha256, uint64_t>>> FindAlias(std::string_view digest) override;

  Result<void> PutGitBlob(const OciGitBlob& blob) override;
  Result<std::optional<OciGitBlob>> FindGitBlobByOid(std::string_view git_oid) override;
  Result<std::optional<OciGitBlob>> FindGitBlobBySha256(const Sha256& sha256) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

#pragma once
// OciStore: the registry's metadata (oci.md §3–§7) — manifests with their exact bytes,
// tags, the referrers index, OCI blob links, digest aliases for non-sha256 blobs, and the
// cache of sha256 per git blob used by the repo projection (oci.md §12). Interface only;
// SqlOciStore (db/sql/, on SQLite or PostgreSQL) implements it.
//
// Digests are strings "<algorithm>:<hex>" as services/oci/oci_names.h parses them. Blob bytes
// live in the BlobStore under their Sha256 whatever digest the client used.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::db {

// A manifest or index pushed to a repo (oci.md §5).
struct OciManifestRecord {
  int64_t repo_id = 0;
  std::string digest;            // over `body`, in the algorithm the client chose (sha256 default)
  std::string media_type;        // served as Content-Type (the manifest's mediaType, or as pushed)
  std::string body;              // the exact bytes as pushed (at most the manifest size limit)
  std::string subject;           // digest of `subject`, "" when it has none (referrers, §6.2)
  std::string artifact_type;     // artifactType, else config.mediaType, "" for neither
  std::string annotations_json;  // top-level "annotations" object as JSON text, "" if none
  int64_t created_at = 0;        // unix seconds
};

// One entry of a referrers answer (oci.md §6.2): a manifest without its body.
struct OciReferrer {
  std::string digest;
  std::string media_type;
  uint64_t size = 0;  // bytes of the referrer's body
  std::string artifact_type;
  std::string annotations_json;
};

// What a manifest points at, for the references table (GC, blob deletes).
struct OciManifestRef {
  std::string digest;        // config, layer or child manifest digest
  bool is_manifest = false;  // a child of an index (true) or a blob (false)
};

// A git blob whose sha256 the projection computed (oci.md §12 "small git file").
struct OciGitBlob {
  Sha256 sha256;
  std::string git_oid;  // 40 hex
  uint64_t size = 0;    // bytes
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class OciStore {
 public:
  virtual ~OciStore() = default;

  // ---- manifests and tags ----
  // Stores `m` and what it references, in one transaction. Storing a digest the repo
  // already holds keeps the first row (same digest, same bytes). Errors: RepoNotFound.
  virtual Result<void> PutManifest(const OciManifestRecord& m,
                                   const std::vector<OciManifestRef>& refs) = 0;
  // The manifest `digest` of the repo, or nullopt.
  virtual Result<std::optional<OciManifestRecord>> GetManifest(int64_t repo_id,
                                                               std::string_view digest) = 0;
  // Removes manifest `digest`, the tags pointing at it and its references; false when the
  // repo has no such manifest.
  virtual Result<bool> DeleteManifest(int64_t repo_id, std::string_view digest) = 0;
  // Points `tag` at `digest` (creating or moving it) in the same transaction as nothing
  // else. Errors: ManifestUnknown when the repo holds no manifest `digest`.
  virtual Result<void> PutTag(int64_t repo_id, std::string_view tag, std::string_view digest,
                              int64_t now) = 0;
  // The digest `tag` points at, or nullopt.
  virtual Result<std::optional<std::string>> GetTag(int64_t repo_id, std::string_view tag) = 0;
  // Tags in byte order strictly after `after` ("" = from the first), at most `limit`.
  virtual Result<std::vector<std::string>> ListTags(int64_t repo_id, std::string_view after,
                                                    int limit) = 0;
  // Removes `tag`; false when it did not exist.
  virtual Result<bool> DeleteTag(int64_t repo_id, std::string_view tag) = 0;
  // Manifests of the repo whose subject is `subject`, in digest order strictly after
  // `after`, at most `limit`; only those of `artifact_type` when it is not "".
  virtual Result<std::vector<OciReferrer>> ListReferrers(int64_t repo_id, std::string_view subject,
                                                         std::string_view artifact_type,
                                                         std::string_view after, int limit) = 0;
  // How many manifests of the repo reference `digest` (as blob or child).
  virtual Result<int64_t> CountReferences(int64_t repo_id, std::string_view digest) = 0;

  // ---- blob links (LfsStore's lfs_links plays the same role for git-lfs objects) ----
  // Links blob `sha256` (of `size` bytes) to the repo, at `now`; linking again keeps one
  // row and moves its time to `now` (a re-pushed blob gets a fresh grace before GC may
  // prune the link). Errors: RepoNotFound.
  virtual Result<void> LinkBlob(int64_t repo_id, const Sha256& sha256, uint64_t size,
                                int64_t now) = 0;
  // The linked blob's size, or nullopt.
  virtual Result<std::optional<uint64_t>> BlobLinked(int64_t repo_id, const Sha256& sha256) = 0;
  // Removes the link; false when there was none.
  virtual Result<bool> UnlinkBlob(int64_t repo_id, const Sha256& sha256) = 0;
  // GC: removes links made before `linked_before` (unix seconds) whose blob no manifest of
  // that repo references (an upload whose manifest never came, or whose manifests were all
  // deleted). Returns how many were removed.
  virtual Result<int64_t> PruneUnreferencedLinks(int64_t linked_before) = 0;

  // ---- digest aliases: a blob pushed under sha512 is stored under its sha256 ----
  // Records that `digest` names the blob `sha256` of `size` bytes (idempotent).
  virtual Result<void> PutAlias(std::string_view digest, const Sha256& sha256, uint64_t size) = 0;
  // The sha256 and size `digest` names, or nullopt.
  virtual Result<std::optional<std::pair<Sha256, uint64_t>>> FindAlias(std::string_view digest) = 0;

  // ---- projection cache: sha256 per git blob (content-addressed, so global) ----
  virtual Result<void> PutGitBlob(const OciGitBlob& blob) = 0;
  virtual Result<std::optional<OciGitBlob>> FindGitBlobByOid(std::string_view git_oid) = 0;
  virtual Result<std::optional<OciGitBlob>> FindGitBlobBySha256(const Sha256& sha256) = 0;
};

}  // namespace hangar::db

#pragma once
// OciProjection: every hub repo revision seen as an OCI model artifact (oci.md §11–12,
// issue #5 point 3). A branch, tag or commit sha with no pushed manifest of that name
// answers a synthesized ModelPack/ORAS image manifest: one `.raw` layer per file, LFS files
// by their sha256 (served straight from the blob store), small git files by a sha256
// computed once per git blob oid (db::OciStore's git-blob cache), title and file-path
// annotations, and a generated model config blob stored in the blob store. Manifests are
// byte-stable (same revision, same digest) and are kept as ordinary manifest rows, so a
// GET by digest and referrers to them work like for pushed ones.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"
#include "core/sha256.h"
#include "db/lfs_store.h"
#include "db/oci_store.h"
#include "git/repo_reader.h"
#include "services/repo/repo_service.h"
#include "storage/blob_store.h"
#include "storage/byte_range.h"

namespace hangar::services {

// A synthesized manifest.
struct ProjectedManifest {
  std::string digest;      // "sha256:<hex>" of `body`
  std::string media_type;  // application/vnd.oci.image.manifest.v1+json
  std::string body;        // canonical JSON (fixed key order, no whitespace)
  std::string commit;      // the 40-hex commit it describes
};

// A projected blob opened for reading.
struct ProjectedBlob {
  std::unique_ptr<ByteSource> body;  // the requested window; Size() is its length
  uint64_t size = 0;                 // the whole blob's size, bytes
};

// Thread-safe; calls block (git, database, blob store).
class OciProjection {
 public:
  // `public_url` (e.g. "http://127.0.0.1:8080") goes into the source annotation.
  OciProjection(git::RepoReader& reader, storage::BlobStore& blobs, db::OciStore& oci,
                db::LfsStore& lfs, std::string public_url);
  ~OciProjection();

  // The manifest of revision `reference` (a branch, a git tag or a 40-hex commit) of
  // `repo`, or nullopt when it names none of those. Stores the manifest row (with its
  // references) and the config blob on first use. Errors: Internal.
  Result<std::optional<ProjectedManifest>> Manifest(const RepoHandle& repo,
                                                    std::string_view reference);

  // Blob `sha256` of `repo` when it is a projected small git file (a blob of the repo's
  // git objects whose sha256 the cache holds), or nullopt. `range` as BlobStore::Open.
  // Errors: RangeNotSatisfiable, Internal.
  Result<std::optional<ProjectedBlob>> OpenBlob(const RepoHandle& repo, const Sha256& sha256,
                                                storage::ByteRange range);

  // The repo's branches and git tags whose names are valid OCI tags, sorted byte-wise
  // (tags/list merges them with pushed tags). Errors: Internal.
  Result<std::vector<std::string>> RevisionTags(const RepoHandle& repo);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hangar::services

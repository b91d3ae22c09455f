#include "services/oci_projection.h"

// Placeholder until the projection work of issue #5 lands: no revision is projected.
namespace hangar::services {

struct OciProjection::Impl {};

OciProjection::OciProjection(git::RepoReader&, storage::BlobStore&, db::OciStore&,
                             db::LfsStore&, std::string)
    : impl_(std::make_unique<Impl>()) {}
OciProjection::~OciProjection() = default;

Result<std::optional<ProjectedManifest>> OciProjection::Manifest(const RepoHandle&,
                                                                 std::string_view) {
  return std::optional<ProjectedManifest>();
}

Result<std::optional<ProjectedBlob>> OciProjection::OpenBlob(const RepoHandle&, const Sha256&,
                                                             storage::ByteRange) {
  return std::optional<ProjectedBlob>();
}

Result<std::vector<std::string>> OciProjection::RevisionTags(const RepoHandle&) {
  return std::vector<std::string>();
}

}  // namespace hangar::services

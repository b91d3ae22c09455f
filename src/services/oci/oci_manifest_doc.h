#pragma once
// A pushed OCI manifest or index parsed and checked for what the registry needs from it
// (oci.md §5 step 3): its media type, the descriptors it references, its subject,
// artifact type and annotations. Pure: no store is consulted (OciService::PutManifest
// then checks that the referenced content exists).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "services/oci/oci_names.h"

namespace hangar::services {

// A descriptor (image-spec descriptor.md) as far as the registry reads it.
struct OciDescriptor {
  std::string media_type;
  OciDigest digest;
};

// What ParseOciManifest found. Unknown fields are ignored (kept in the stored bytes).
struct OciManifestDoc {
  std::string media_type;     // one of the four manifest/index types
  bool is_index = false;      // an image index or Docker manifest list
  std::string artifact_type;  // artifactType, else config.mediaType; "" for an index without
  std::optional<OciDescriptor> subject;
  std::string annotations_json;          // top-level "annotations" as JSON text, "" if none
  std::vector<OciDescriptor> blobs;      // image manifest: config first, then the layers
  std::vector<OciDescriptor> manifests;  // index: its child manifests
};

// Parses `bytes` pushed with `content_type` (parameters ignored; "" when absent). The media
// type is the document's mediaType (which must match a manifest Content-Type), else the
// Content-Type, else guessed from the presence of "manifests". Requires schemaVersion 2,
// and a config plus a layers array (manifest) or a manifests array (index) of descriptors
// with a string mediaType, a digest ParseDigest accepts and a non-negative integer size.
// Errors: ManifestInvalid saying what is wrong.
Result<OciManifestDoc> ParseOciManifest(std::string_view bytes, std::string_view content_type);

}  // namespace hangar::services

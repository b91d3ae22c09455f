// OCI manifests and indexes as pushed to PUT /v2/<name>/manifests/<ref> (oci.md §5;
// services::ParseOciManifest), with each of the Content-Types clients send (chosen by
// the first input byte), and the digest and tag grammars of the same request. A document
// accepted must have the shape its media type promises, with digests that print back as
// parsed.

#include <array>

#include "fuzz_check.h"
#include "services/oci/oci_manifest_doc.h"
#include "services/oci/oci_names.h"

using namespace hangar;

namespace {

constexpr std::array<std::string_view, 8> kContentTypes = {
    "",
    "application/json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json; charset=utf-8",
    "application/octet-stream",
    "text/plain",
};

void CheckDigest(const services::OciDigest& d) {
  auto again = services::ParseDigest(d.String());
  FUZZ_CHECK(again && *again == d);
  FUZZ_CHECK(d.encoded.size() == (d.algorithm == "sha256" ? 64u : 128u));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view content_type = kContentTypes[data[0] % kContentTypes.size()];
  std::string_view bytes = fuzz::AsText(data + 1, size - 1);

  if (auto doc = services::ParseOciManifest(bytes, content_type)) {
    FUZZ_CHECK(doc->media_type.starts_with("application/vnd."));
    if (doc->is_index) {
      FUZZ_CHECK(doc->blobs.empty());
    } else {
      FUZZ_CHECK(doc->manifests.empty() && !doc->blobs.empty());
    }
    for (const auto& d : doc->blobs) CheckDigest(d.digest);
    for (const auto& d : doc->manifests) CheckDigest(d.digest);
    if (doc->subject) CheckDigest(doc->subject->digest);
  } else {
    FUZZ_CHECK(doc.error().code == ErrorCode::ManifestInvalid);
  }

  // The reference and name of the same request.
  if (auto digest = services::ParseDigest(bytes)) {
    FUZZ_CHECK(digest->String() == bytes);
    CheckDigest(*digest);
  }
  if (services::IsValidTag(bytes)) {
    FUZZ_CHECK(!bytes.empty() && bytes.size() <= 128 && !services::IsDigestReference(bytes));
  }
  return 0;
}

// services/oci/oci_manifest_doc.h: what a pushed manifest or index declares (oci.md §5).

#include "services/oci/oci_manifest_doc.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

const std::string kA = "sha256:" + std::string(64, 'a');
const std::string kB = "sha256:" + std::string(64, 'b');

std::string Descriptor(std::string_view media_type, const std::string& digest) {
  return "{\"mediaType\":\"" + std::string(media_type) + "\",\"digest\":\"" + digest +
         "\",\"size\":3}";
}

TEST(OciManifestDoc, ImageManifestListsConfigThenLayers) {
  std::string m = "{\"schemaVersion\":2,\"config\":" +
                  Descriptor("application/vnd.oci.image.config.v1+json", kA) + ",\"layers\":[" +
                  Descriptor("application/x-layer", kB) + "],\"annotations\":{\"k\":\"v\"}}";
  auto doc = ParseOciManifest(m, "application/vnd.oci.image.manifest.v1+json").value();
  EXPECT_EQ(doc.media_type, "application/vnd.oci.image.manifest.v1+json");
  EXPECT_FALSE(doc.is_index);
  ASSERT_EQ(doc.blobs.size(), 2u);
  EXPECT_EQ(doc.blobs[0].digest.String(), kA);
  EXPECT_EQ(doc.blobs[1].media_type, "application/x-layer");
  EXPECT_EQ(doc.artifact_type, "application/vnd.oci.image.config.v1+json");
  EXPECT_EQ(doc.annotations_json, "{\"k\":\"v\"}");
  EXPECT_FALSE(doc.subject.has_value());
}

TEST(OciManifestDoc, IndexGuessedWithoutMediaTypeAndSubjectKept) {
  std::string m = "{\"schemaVersion\":2,\"manifests\":[" +
                  Descriptor("application/vnd.oci.image.manifest.v1+json", kA) +
                  "],\"artifactType\":\"application/x-sig\",\"subject\":" +
                  Descriptor("application/vnd.oci.image.manifest.v1+json", kB) + "}";
  auto doc = ParseOciManifest(m, "").value();
  EXPECT_EQ(doc.media_type, "application/vnd.oci.image.index.v1+json");
  EXPECT_TRUE(doc.is_index);
  ASSERT_EQ(doc.manifests.size(), 1u);
  EXPECT_TRUE(doc.blobs.empty());
  EXPECT_EQ(doc.artifact_type, "application/x-sig");
  ASSERT_TRUE(doc.subject.has_value());
  EXPECT_EQ(doc.subject->digest.String(), kB);
}

TEST(OciManifestDoc, RefusesWhatIsNotAManifest) {
  const std::string config = Descriptor("application/x-config", kA);
  for (std::string_view bad :
       {std::string_view("not json"), std::string_view("[1]"),
        std::string_view("{\"schemaVersion\":1}"),
        std::string_view("{\"schemaVersion\":2,\"mediaType\":\"text/plain\"}"),
        std::string_view("{\"schemaVersion\":2,\"layers\":[]}"),
        std::string_view("{\"schemaVersion\":2,\"manifests\":{}}"),
        std::string_view("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"x\","
                         "\"digest\":\"sha256:AB\",\"size\":1}]}")}) {
    auto r = ParseOciManifest(bad, "");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::ManifestInvalid) << bad;
    EXPECT_TRUE(r.error().message.starts_with("manifest invalid: ")) << r.error().message;
  }
  std::string m =
      "{\"schemaVersion\":2,\"mediaType\":"
      "\"application/vnd.oci.image.manifest.v1+json\",\"config\":" +
      config + ",\"layers\":[]}";
  EXPECT_TRUE(ParseOciManifest(m, "application/vnd.oci.image.manifest.v1+json; q=1"));
  auto mismatch = ParseOciManifest(m, "application/vnd.oci.image.index.v1+json");
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.error().message.find("differs from Content-Type"), std::string::npos);
}

}  // namespace
}  // namespace hangar::services

#pragma once
// The OCI and Docker media types and annotation keys that both the registry (services/oci,
// api/oci) and the `hangar oci` client (client/) speak: the OCI image spec's manifest,
// index, empty config and layer types, Docker's schema-2 manifest and list (oci.md §4,
// §11.1). One spelling of each, so the two sides cannot drift apart.

#include <string_view>

namespace hangar::oci {

inline constexpr std::string_view kManifestType = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view kIndexType = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view kDockerManifestType =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view kDockerListType =
    "application/vnd.docker.distribution.manifest.list.v2+json";
// The empty config ("{}") of artifacts that have none (image-spec manifest.md).
inline constexpr std::string_view kEmptyConfigType = "application/vnd.oci.empty.v1+json";
inline constexpr std::string_view kEmptyConfig = "{}";
inline constexpr std::string_view kEmptyConfigDigest =
    "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";  // of "{}"
// What `oras push` gives a file layer by default.
inline constexpr std::string_view kTarLayerType = "application/vnd.oci.image.layer.v1.tar";
// The annotation naming a layer's file, which `oras pull` places by.
inline constexpr std::string_view kTitleKey = "org.opencontainers.image.title";

}  // namespace hangar::oci

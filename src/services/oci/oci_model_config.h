#pragma once
// The ModelPack side of the repo projection (oci.md §11.2, §12): which layer media type a
// repo file gets, and the model config blob (application/vnd.cncf.model.config.v1+json)
// built from a revision's model card and config.json. Pure functions: no git, no I/O;
// services/oci/oci_projection.cc feeds them. Output JSON is byte-stable (fixed key order, no
// whitespace), so the same inputs always give the same digest.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/oci_media_types.h"
#include "core/repo_id.h"

namespace hangar::services {

// Media types of the projected artifacts (oci.md §11.2, §12; docs/oci-projection.md).
inline constexpr std::string_view kOciManifestType = oci::kManifestType;
inline constexpr std::string_view kModelArtifactType =
    "application/vnd.cncf.model.manifest.v1+json";
inline constexpr std::string_view kModelConfigType = "application/vnd.cncf.model.config.v1+json";
// Datasets and spaces: ORAS-style artifacts with the empty config (oci.md §11.1).
inline constexpr std::string_view kDatasetArtifactType = "application/vnd.hangar.dataset.v1";
inline constexpr std::string_view kSpaceArtifactType = "application/vnd.hangar.space.v1";
using oci::kEmptyConfig;
using oci::kEmptyConfigType;
// What `oras push` gives a file layer by default; space layers use it (the bytes are the
// raw file, as with oras).
inline constexpr std::string_view kOrasFileLayerType = oci::kTarLayerType;

// The artifactType and config media type of a repo type's projected manifest.
std::string_view ArtifactTypeOf(RepoType type);
std::string_view ConfigMediaTypeOf(RepoType type);

// How a file of a revision is typed as a layer.
struct LayerClass {
  std::string media_type;  // e.g. "application/vnd.cncf.model.weight.v1.raw"
  bool untested = false;   // a guess: annotate org.cncf.model.file.mediatype.untested "true"
  bool is_weight = false;  // a model weight file (feeds the config's format)
};

// Classifies `path` (a file path of the repo, "dir/name.ext"; `lfs` when it is stored with
// git-lfs) by its name (oci.md §12 notes). Models and datasets get ModelPack `.raw` kinds
// (weight, weight.config, doc, code, dataset); well-known names and extensions are firm,
// everything else a guess (untested): in a model repo an unrecognised LFS file is taken
// for a weight, another unrecognised file for a doc. Spaces get kOrasFileLayerType, never
// untested. docs/oci-projection.md has the tables.
LayerClass ClassifyLayer(RepoType type, std::string_view path, bool lfs = false);

// What a model config is made of.
struct ModelConfigInput {
  std::string created_at;                  // RFC 3339 UTC, the commit time ("2023-11-14T22:13:20Z")
  std::string name;                        // the repo's name ("bert-tiny")
  std::string doc_url;                     // the repo's page on the hub
  std::string revision;                    // the 40-hex commit
  std::optional<std::string> readme;       // README.md text when the revision has one
  std::optional<std::string> config_json;  // config.json text when it has one
  std::vector<std::string> weight_paths;   // paths of the weight layers
  std::vector<std::string> diff_ids;       // every layer's digest, in layer order
};

// The config JSON (oci.md §11.2): descriptor {createdAt, family (config.json model_type),
// name, docURL, revision, licenses (the card's `license`)}, config {format (from weight
// file extensions: safetensors, gguf, onnx, pytorch, tensorflow, flax, tflite, in that
// preference), precision (config.json torch_dtype or dtype, when a ModelPack precision),
// quantization (quantization_config.quant_method)}, modelfs {type "layers", diffIds}.
// Fields with no source are left out. A malformed card or config.json contributes
// nothing; it never fails.
std::string BuildModelConfig(const ModelConfigInput& in);

// "2023-11-14T22:13:20Z" for `unix_seconds`.
std::string Rfc3339Utc(int64_t unix_seconds);

}  // namespace hangar::services

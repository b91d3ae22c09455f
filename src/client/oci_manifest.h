#pragma once
// How `hangar oci push` lays files out in an OCI image manifest, and how `pull` reads one
// back (docs/oci-client.md): one layer per part of a file, the reassembly recorded in
// layer annotations; single-part files also carry org.opencontainers.image.title so that
// `oras pull` places them, and plain ORAS manifests (one titled layer per file) pull too.
// Pure functions: no I/O.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/oci_media_types.h"
#include "core/result.h"

namespace hangar::client {

// Media types and annotation keys (oci.md §11.1 for the artifact shape).
// The OCI types and the title key: core/oci_media_types.h.
using oci::kEmptyConfigDigest;
using oci::kEmptyConfigType;
using oci::kTitleKey;
inline constexpr std::string_view kOciManifestType = oci::kManifestType;
inline constexpr std::string_view kOciIndexType = oci::kIndexType;
inline constexpr std::string_view kHangarArtifactType = "application/vnd.hangar.files.v1";
inline constexpr std::string_view kHangarFileType = "application/vnd.hangar.file.v1";
inline constexpr std::string_view kHangarPartType = "application/vnd.hangar.file.part.v1";
inline constexpr std::string_view kCreatedKey = "org.opencontainers.image.created";
inline constexpr std::string_view kPathKey = "org.hangar.file.path";          // relative path
inline constexpr std::string_view kFileSizeKey = "org.hangar.file.size";      // decimal bytes
inline constexpr std::string_view kFileSha256Key = "org.hangar.file.sha256";  // 64 hex, optional
inline constexpr std::string_view kPartIndexKey = "org.hangar.part.index";    // 0-based
inline constexpr std::string_view kPartCountKey = "org.hangar.part.count";
inline constexpr std::string_view kPartOffsetKey = "org.hangar.part.offset";  // bytes

// One part of a file: bytes [offset, offset + length), stored as the blob `digest`.
struct FilePart {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string digest;  // "sha256:<hex>"
  friend bool operator==(const FilePart&, const FilePart&) = default;
};

// A file of an artifact and the parts it is made of, in offset order.
struct FileEntry {
  std::string path;    // relative, '/'-separated, checked by SafeRelativePath
  uint64_t size = 0;   // bytes
  std::string sha256;  // 64 hex of the whole file, or "" when not known: a multi-part
                       // file pushed without --file-sha256, a plain ORAS layer that is
                       // not a sha256 digest
  std::vector<FilePart> parts;
  friend bool operator==(const FileEntry&, const FileEntry&) = default;
};

// Splits `size` bytes into parts of `part_size` (> 0) bytes, the last one shorter:
// {offset, length} pairs. An empty file is one empty part.
std::vector<std::pair<uint64_t, uint64_t>> PlanParts(uint64_t size, uint64_t part_size);

// The manifest bytes for `files` (every part's digest filled in): OCI image manifest,
// artifactType kHangarArtifactType, the empty config, one layer per part in file order
// (kFileSha256Key only for files whose sha256 is known),
// manifest annotations `annotations` plus org.opencontainers.image.created = `created`
// (RFC 3339) unless given. Deterministic for the same input.
std::string BuildManifest(const std::vector<FileEntry>& files,
                          const std::map<std::string, std::string>& annotations,
                          std::string_view created);

// The files a manifest describes: Hangar's annotated parts regrouped by path, or one
// file per layer titled with org.opencontainers.image.title (ORAS). Layers with neither
// are skipped; `skipped` (when given) counts them. Errors: ManifestInvalid for JSON that
// is not an image manifest, a layer without a valid digest or size, or parts that do not
// tile their file exactly (missing, repeated or overlapping parts, sizes that disagree);
// BadRequest for a path SafeRelativePath refuses or two layers naming the same file.
Result<std::vector<FileEntry>> FilesOfManifest(std::string_view manifest_json,
                                               size_t* skipped = nullptr);

// `name` as a relative path that stays inside the directory it is written under:
// '/'-separated, "." and empty components dropped. Errors: BadRequest for an empty name,
// an absolute path, or one ValidateReadPath refuses: a ".." component, a NUL byte, a
// ".git" component in any disguise (the message quotes the name).
Result<std::string> SafeRelativePath(std::string_view name);

}  // namespace hangar::client

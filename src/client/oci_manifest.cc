#include "client/oci_manifest.h"

#include <algorithm>

#include <boost/json.hpp>

#include "client/oci_client.h"
#include "core/hex.h"
#include "core/repo_path.h"
#include "core/util.h"

namespace hangar::client {

namespace json = boost::json;

namespace {

std::optional<uint64_t> JsonU64(const json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64() && v->as_int64() >= 0) return static_cast<uint64_t>(v->as_int64());
  return std::nullopt;
}

std::string Annotation(const json::object* a, std::string_view key) {
  if (a == nullptr) return "";
  const auto* v = a->if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

Error Invalid(const std::string& why) {
  return MakeError(ErrorCode::ManifestInvalid, "the manifest " + why);
}

// One layer's part of a Hangar-annotated file.
struct AnnotatedPart {
  uint64_t index, count, offset, file_size;
  std::string sha256;
  FilePart part;
};

// Checks the parts of one file tile it exactly and turns them into a FileEntry.
Result<FileEntry> Assemble(const std::string& path, std::vector<AnnotatedPart> parts) {
  std::sort(parts.begin(), parts.end(),
            [](const AnnotatedPart& a, const AnnotatedPart& b) { return a.index < b.index; });
  FileEntry f;
  f.path = path;
  f.size = parts[0].file_size;
  f.sha256 = parts[0].sha256;
  uint64_t count = parts[0].count;
  if (count != parts.size()) {
    return Invalid("lists " + std::to_string(parts.size()) + " part(s) of '" + path +
                   "', which has " + std::to_string(count));
  }
  uint64_t next = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& p = parts[i];
    if (p.index != i || p.count != count || p.file_size != f.size || p.sha256 != f.sha256) {
      return Invalid("has inconsistent part annotations for '" + path + "' (part " +
                     std::to_string(p.index) + ")");
    }
    if (p.offset != next || p.part.length > f.size - next) {
      return Invalid("has parts of '" + path + "' that leave a gap or overlap at byte " +
                     std::to_string(next));
    }
    next += p.part.length;
    f.parts.push_back(p.part);
  }
  if (next != f.size) {
    return Invalid("has parts of '" + path + "' that cover " + std::to_string(next) + " of its " +
                   std::to_string(f.size) + " bytes");
  }
  return f;
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> PlanParts(uint64_t size, uint64_t part_size) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (part_size == 0) part_size = 1;
  if (size == 0) out.emplace_back(0, 0);
  for (uint64_t off = 0; off < size; off += part_size) {
    out.emplace_back(off, std::min(part_size, size - off));
  }
  return out;
}

std::string BuildManifest(const std::vector<FileEntry>& files,
                          const std::map<std::string, std::string>& annotations,
                          std::string_view created) {
  json::array layers;
  for (const auto& f : files) {
    for (size_t i = 0; i < f.parts.size(); ++i) {
      const auto& p = f.parts[i];
      json::object a;
      if (f.parts.size() == 1) a[kTitleKey] = f.path;  // oras pull places it
      a[kPathKey] = f.path;
      if (!f.sha256.empty()) a[kFileSha256Key] = f.sha256;
      a[kFileSizeKey] = std::to_string(f.size);
      a[kPartCountKey] = std::to_string(f.parts.size());
      a[kPartIndexKey] = std::to_string(i);
      a[kPartOffsetKey] = std::to_string(p.offset);
      layers.push_back(
          json::object{{"mediaType", f.parts.size() == 1 ? kHangarFileType : kHangarPartType},
                       {"digest", p.digest},
                       {"size", p.length},
                       {"annotations", std::move(a)}});
    }
  }
  json::object notes;
  if (!annotations.contains(std::string(kCreatedKey))) notes[kCreatedKey] = created;
  for (const auto& [k, v] : annotations) notes[k] = v;
  json::object m{{"schemaVersion", 2},
                 {"mediaType", kOciManifestType},
                 {"artifactType", kHangarArtifactType},
                 {"config", json::object{{"mediaType", kEmptyConfigType},
                                         {"digest", kEmptyConfigDigest},
                                         {"size", 2},
                                         {"data", "e30="}}},
                 {"layers", std::move(layers)},
                 {"annotations", std::move(notes)}};
  return json::serialize(m);
}

Result<std::string> SafeRelativePath(std::string_view name) {
  auto refuse = [&](const std::string& why) {
    return MakeError(ErrorCode::BadRequest, "file name '" + std::string(name) + "' " + why);
  };
  if (name.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (name.starts_with("/")) return refuse("is an absolute path");
  std::string out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view comp =
        name.substr(start, slash == std::string_view::npos ? name.npos : slash - start);
    if (comp == "..") return refuse("escapes the output directory ('..')");
    if (!comp.empty() && comp != ".") {
      if (!out.empty()) out += '/';
      out += comp;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (out.empty()) return refuse("names no file");
  // No ".git" in any disguise either: a pull into a git work tree must not write into it.
  HANGAR_TRY(ValidateReadPath(out));
  return out;
}

Result<std::vector<FileEntry>> FilesOfManifest(std::string_view manifest_json, size_t* skipped) {
  boost::system::error_code ec;
  json::value v = json::parse(manifest_json, ec);
  if (ec || !v.is_object()) return Invalid("is not a JSON object");
  const auto& m = v.as_object();
  const auto* mt = m.if_contains("mediaType");
  if (mt != nullptr && mt->is_string() && mt->as_string() == kOciIndexType) {
    return Invalid("is an image index, not a manifest: pull one of its manifests by digest");
  }
  const auto* layers = m.if_contains("layers");
  if (layers == nullptr || !layers->is_array()) return Invalid("has no layers array");

  std::map<std::string, std::vector<AnnotatedPart>> annotated;
  std::vector<FileEntry> files;
  std::vector<std::string> order;  // paths in first-seen order
  if (skipped) *skipped = 0;
  for (const auto& lv : layers->as_array()) {
    if (!lv.is_object()) return Invalid("has a layer that is not an object");
    const auto& l = lv.as_object();
    const auto* dv = l.if_contains("digest");
    std::string digest = dv != nullptr && dv->is_string() ? std::string(dv->as_string()) : "";
    auto size = JsonU64(l.if_contains("size"));
    if (!IsValidOciDigest(digest) || !size) {
      return Invalid("has a layer without a valid digest and size");
    }
    const auto* av = l.if_contains("annotations");
    const json::object* a = av != nullptr && av->is_object() ? &av->as_object() : nullptr;
    std::string path = Annotation(a, kPathKey);
    if (!path.empty()) {
      AnnotatedPart p;
      auto index = ParseUint64(Annotation(a, kPartIndexKey));
      auto count = ParseUint64(Annotation(a, kPartCountKey));
      auto offset = ParseUint64(Annotation(a, kPartOffsetKey));
      auto file_size = ParseUint64(Annotation(a, kFileSizeKey));
      p.sha256 = Annotation(a, kFileSha256Key);
      bool sha_ok = p.sha256.empty() || IsLowerHex(p.sha256, 64);  // optional (push --file-sha256)
      if (!index || !count || !offset || !file_size || !sha_ok || *count == 0) {
        return Invalid("has a part of '" + path + "' with missing or malformed annotations");
      }
      HANGAR_ASSIGN_OR_RETURN(std::string safe, SafeRelativePath(path));
      p.index = *index;
      p.count = *count;
      p.offset = *offset;
      p.file_size = *file_size;
      p.part = FilePart{*offset, *size, digest};
      if (!annotated.contains(safe)) order.push_back(safe);
      annotated[safe].push_back(std::move(p));
      continue;
    }
    std::string title = Annotation(a, kTitleKey);
    if (title.empty()) {
      if (skipped) ++*skipped;
      continue;
    }
    HANGAR_ASSIGN_OR_RETURN(std::string safe, SafeRelativePath(title));
    FileEntry f;
    f.path = safe;
    f.size = *size;
    if (digest.starts_with("sha256:")) f.sha256 = digest.substr(7);
    f.parts.push_back(FilePart{0, *size, digest});
    files.push_back(std::move(f));
    order.push_back(safe);
  }
  for (auto& [path, parts] : annotated) {
    HANGAR_ASSIGN_OR_RETURN(FileEntry f, Assemble(path, std::move(parts)));
    files.push_back(std::move(f));
  }
  // Manifest order, and no name twice.
  std::map<std::string, size_t> rank;
  for (const auto& p : order) {
    if (!rank.emplace(p, rank.size()).second) {
      return MakeError(ErrorCode::BadRequest, "the manifest names the file '" + p + "' twice");
    }
  }
  std::sort(files.begin(), files.end(),
            [&](const FileEntry& a, const FileEntry& b) { return rank[a.path] < rank[b.path]; });
  return files;
}

}  // namespace hangar::client

// ParseOciManifest (oci.md §5 step 3): light validation, unknown fields kept.

#include "services/oci/oci_manifest_doc.h"
#include "core/oci_media_types.h"

#include <boost/json.hpp>

namespace hangar::services {

namespace json = boost::json;

namespace {

constexpr std::string_view kOciManifest = oci::kManifestType;
constexpr std::string_view kOciIndex = oci::kIndexType;
constexpr std::string_view kDockerManifest = oci::kDockerManifestType;
constexpr std::string_view kDockerList = oci::kDockerListType;

bool IsIndexType(std::string_view t) { return t == kOciIndex || t == kDockerList; }
bool IsManifestType(std::string_view t) {
  return t == kOciManifest || t == kDockerManifest || IsIndexType(t);
}

// "type/subtype; charset=x" → "type/subtype".
std::string_view StripParams(std::string_view ct) {
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && (ct.back() == ' ' || ct.back() == '\t')) ct.remove_suffix(1);
  while (!ct.empty() && (ct.front() == ' ' || ct.front() == '\t')) ct.remove_prefix(1);
  return ct;
}

Error Invalid(std::string message) {
  return MakeError(ErrorCode::ManifestInvalid, "manifest invalid: " + std::move(message));
}

// A descriptor (image-spec descriptor.md): mediaType, digest and size are required.
Result<OciDescriptor> ParseDescriptor(const json::value* v, const std::string& where) {
  if (!v || !v->is_object()) return Invalid(where + " must be a descriptor object");
  const auto& o = v->get_object();
  const json::value* mt = o.if_contains("mediaType");
  const json::value* dg = o.if_contains("digest");
  const json::value* sz = o.if_contains("size");
  if (!mt || !mt->is_string()) return Invalid(where + ".mediaType must be a string");
  if (!dg || !dg->is_string()) return Invalid(where + ".digest must be a string");
  if (!sz || !(sz->is_uint64() || (sz->is_int64() && sz->get_int64() >= 0))) {
    return Invalid(where + ".size must be a non-negative integer");
  }
  auto digest = ParseDigest(std::string_view(dg->get_string()));
  if (!digest) return Invalid(where + ": " + digest.error().message);
  return OciDescriptor{std::string(mt->get_string()), std::move(*digest)};
}

// Each element of the array member `key` of `obj` as a descriptor, appended to `out`.
Result<void> ParseDescriptors(const json::object& obj, std::string_view key,
                              std::vector<OciDescriptor>& out) {
  const json::value* list = obj.if_contains(key);
  if (!list || !list->is_array()) return Invalid(std::string(key) + " must be an array");
  const json::array& a = list->get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    HANGAR_ASSIGN_OR_RETURN(
        auto d, ParseDescriptor(&a[i], std::string(key) + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(d));
  }
  return {};
}

}  // namespace

Result<OciManifestDoc> ParseOciManifest(std::string_view bytes, std::string_view content_type) {
  json::error_code ec;
  json::value value = json::parse(bytes, ec);
  if (ec) return Invalid("not valid JSON (" + ec.message() + ")");
  if (!value.is_object()) return Invalid("not a JSON object");
  const auto& obj = value.get_object();
  const json::value* version = obj.if_contains("schemaVersion");
  if (!version || !version->is_number() || version->to_number<double>() != 2) {
    return Invalid("schemaVersion must be 2");
  }
  OciManifestDoc doc;
  std::string_view ct = StripParams(content_type);
  if (const json::value* mt = obj.if_contains("mediaType")) {
    if (!mt->is_string()) return Invalid("mediaType must be a string");
    doc.media_type = std::string(mt->get_string());
    if (!ct.empty() && ct != doc.media_type) {
      return Invalid("mediaType " + doc.media_type.substr(0, 200) + " differs from " +
                     "Content-Type " + std::string(ct.substr(0, 200)));
    }
  } else if (IsManifestType(ct)) {
    doc.media_type = std::string(ct);
  } else if (ct.empty() || ct == "application/json" || ct == "application/octet-stream") {
    doc.media_type = std::string(obj.contains("manifests") ? kOciIndex : kOciManifest);
  } else {
    doc.media_type = std::string(ct);
  }
  if (!IsManifestType(doc.media_type)) {
    return Invalid("unknown manifest media type " + doc.media_type.substr(0, 200));
  }
  doc.is_index = IsIndexType(doc.media_type);
  if (doc.is_index) {
    HANGAR_TRY(ParseDescriptors(obj, "manifests", doc.manifests));
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto config, ParseDescriptor(obj.if_contains("config"), "config"));
    doc.artifact_type = config.media_type;
    doc.blobs.push_back(std::move(config));
    HANGAR_TRY(ParseDescriptors(obj, "layers", doc.blobs));
  }
  if (const json::value* at = obj.if_contains("artifactType")) {
    if (!at->is_string()) return Invalid("artifactType must be a string");
    doc.artifact_type = std::string(at->get_string());
  }
  if (const json::value* s = obj.if_contains("subject")) {
    HANGAR_ASSIGN_OR_RETURN(auto subject, ParseDescriptor(s, "subject"));
    doc.subject = std::move(subject);
  }
  if (const json::value* a = obj.if_contains("annotations")) {
    if (!a->is_object()) return Invalid("annotations must be an object");
    doc.annotations_json = json::serialize(*a);
  }
  return doc;
}

}  // namespace hangar::services

// OciService's manifests (oci.md §3.1, §5, §7) and referrers (§6.2).

#include <boost/json.hpp>

#include <set>

#include "core/oci_media_types.h"
#include "services/oci/oci_manifest_doc.h"
#include "services/oci/oci_service.h"

namespace hangar::services {

namespace json = boost::json;

namespace {

constexpr std::string_view kOciIndex = oci::kIndexType;
// Referrers answered in one response (larger sets are cut; docs/oci.md).
constexpr int kMaxReferrers = 10000;

// Layers that are never uploaded (oci.md §5 step 4): exempt from the existence check.
bool IsNondistributable(std::string_view t) {
  return t.starts_with("application/vnd.oci.image.layer.nondistributable.") ||
         t.starts_with("application/vnd.docker.image.rootfs.foreign.");
}

// The referrers-tag schema's tag for `d` (oci.md §6.2): "<alg>-<hex>", truncated.
std::string ReferrersTag(const OciDigest& d) {
  return d.algorithm.substr(0, 32) + "-" + d.encoded.substr(0, 64);
}

// The tags a manifest PUT sets: the reference when it is a tag, and `tags` (?tag=, oci.md
// §5); `by_digest` is set when the reference is a digest. Errors: TagInvalid,
// DigestInvalid (a malformed digest reference).
Result<std::vector<std::string>> TagsToSet(std::string_view reference,
                                           const std::vector<std::string>& tags,
                                           std::optional<OciDigest>& by_digest) {
  std::vector<std::string> out;
  if (IsDigestReference(reference)) {
    HANGAR_ASSIGN_OR_RETURN(by_digest, ParseDigest(reference));
  } else {
    out.emplace_back(reference);
  }
  for (const auto& t : tags) out.push_back(t);
  for (const auto& t : out) {
    if (!IsValidTag(t)) {
      return MakeError(ErrorCode::TagInvalid, "invalid tag \"" + t.substr(0, 200) +
                                                  "\" (tags match " +
                                                  "[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127})");
    }
  }
  return out;
}

}  // namespace

Result<void> OciService::CheckReferences(const RepoHandle& repo, const OciManifestDoc& doc,
                                         const std::string& subject,
                                         std::vector<db::OciManifestRef>& refs) {
  std::vector<std::string> missing;
  for (const auto& d : doc.blobs) {
    refs.push_back({d.digest.String(), false});
    if (&d != &doc.blobs.front() && IsNondistributable(d.media_type)) continue;
    HANGAR_ASSIGN_OR_RETURN(auto linked, LinkedBlob(repo, d.digest));
    if (linked) continue;
    // A small git file of the repo is a blob here too (HEAD and GET serve it, §12), so a
    // manifest copied out of a projected revision pushes back without re-uploading it.
    if (d.digest.algorithm == "sha256") {
      HANGAR_ASSIGN_OR_RETURN(auto projected,
                              projection_.OpenBlob(repo, *Sha256::ParseHex(d.digest.encoded),
                                                   storage::ByteRange::Window(0, 0)));
      if (projected) continue;
    }
    missing.push_back("blob " + d.digest.String());
  }
  for (const auto& d : doc.manifests) {
    refs.push_back({d.digest.String(), true});
    // An index referring to its subject (a referrer may be pushed before its subject,
    // §5 step 4; the v1.1.1 conformance suite does this) may list it before it exists.
    if (d.digest.String() == subject) continue;
    HANGAR_ASSIGN_OR_RETURN(auto child, oci_.GetManifest(repo.record.id, d.digest.String()));
    if (!child) missing.push_back("manifest " + d.digest.String());
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 5) list += " and " + std::to_string(missing.size() - 5) + " more";
    return MakeError(ErrorCode::ManifestBlobUnknown,
                     "manifest references content the repository does not have: " + list);
  }
  return {};
}

Result<OciManifestPut> OciService::PutManifest(const Principal& who, std::string_view name,
                                               std::string_view reference,
                                               std::string_view content_type, ByteSource& body,
                                               const std::vector<std::string>& tags) {
  // Callers without access learn so before their body is judged; a missing repo is made
  // only once the manifest proved valid.
  auto existing = OpenRepo(who, name, Access::Write);
  if (!existing && (existing.error().code != ErrorCode::RepoNotFound || who.anonymous)) {
    return std::move(existing).error();
  }
  std::optional<OciDigest> by_digest;
  HANGAR_ASSIGN_OR_RETURN(std::vector<std::string> new_tags, TagsToSet(reference, tags, by_digest));
  auto bytes = ReadAll(body, options_.max_manifest_bytes);
  if (!bytes) {
    if (bytes.error().code == ErrorCode::PayloadTooLarge) {
      return MakeError(
          ErrorCode::PayloadTooLarge,
          "manifest larger than " + std::to_string(options_.max_manifest_bytes) + " bytes");
    }
    return std::move(bytes).error();
  }
  OciDigest digest = DigestOf(by_digest ? by_digest->algorithm : "sha256", *bytes);
  if (by_digest && digest != *by_digest) {
    return MakeError(
        ErrorCode::DigestInvalid,
        "manifest digest " + digest.String() + " does not match reference " + by_digest->String());
  }

  // ---- validation (oci.md §5 step 3): light, unknown fields kept ----
  HANGAR_ASSIGN_OR_RETURN(OciManifestDoc doc, ParseOciManifest(*bytes, content_type));
  db::OciManifestRecord rec;
  rec.digest = digest.String();
  rec.media_type = doc.media_type;
  rec.created_at = Now();
  rec.artifact_type = doc.artifact_type;
  // The subject may be absent: referrers come first (§5).
  if (doc.subject) rec.subject = doc.subject->digest.String();
  rec.annotations_json = doc.annotations_json;
  std::vector<db::OciManifestRef> refs;

  // ---- referenced content must be in the repo (§5 step 4) ----
  RepoHandle repo;
  if (existing) {
    repo = std::move(*existing);
  } else {
    HANGAR_ASSIGN_OR_RETURN(repo, OpenRepo(who, name, Access::Write, IfMissing::Create));
  }
  HANGAR_TRY(CheckReferences(repo, doc, rec.subject, refs));

  rec.repo_id = repo.record.id;
  rec.body = std::move(*bytes);
  HANGAR_TRY(oci_.PutManifest(rec, refs));
  OciManifestPut out{rec.digest, rec.subject, {}};
  for (const auto& t : new_tags) {
    HANGAR_TRY(oci_.PutTag(repo.record.id, t, rec.digest, rec.created_at));
    out.tags.push_back(t);
  }
  return out;
}

Result<OciManifestRead> OciService::GetManifest(const Principal& who, std::string_view name,
                                                std::string_view reference) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Read));
  auto unknown = [&] {
    return MakeError(ErrorCode::ManifestUnknown,
                     "manifest " + std::string(reference.substr(0, 200)) +
                         " is unknown to repository " + std::string(name));
  };
  std::string digest;
  if (IsDigestReference(reference)) {
    HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(reference));
    digest = parsed.String();
  } else {
    if (!IsValidTag(reference)) return unknown();
    HANGAR_ASSIGN_OR_RETURN(auto tagged, oci_.GetTag(repo.record.id, reference));
    if (!tagged) {
      // No pushed tag of that name: a branch, git tag or commit of the repo (oci.md §12).
      HANGAR_ASSIGN_OR_RETURN(auto projected, projection_.Manifest(repo, reference));
      if (!projected) return unknown();
      return OciManifestRead{std::move(projected->digest), std::move(projected->media_type),
                             std::move(projected->body)};
    }
    digest = std::move(*tagged);
  }
  HANGAR_ASSIGN_OR_RETURN(auto m, oci_.GetManifest(repo.record.id, digest));
  if (!m) return unknown();
  return OciManifestRead{std::move(m->digest), std::move(m->media_type), std::move(m->body)};
}

Result<void> OciService::DeleteManifest(const Principal& who, std::string_view name,
                                        std::string_view reference) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  bool removed = false;
  if (IsDigestReference(reference)) {
    HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(reference));
    HANGAR_ASSIGN_OR_RETURN(removed, oci_.DeleteManifest(repo.record.id, parsed.String()));
  } else {
    if (!IsValidTag(reference)) {
      return MakeError(ErrorCode::TagInvalid,
                       "invalid tag \"" + std::string(reference.substr(0, 200)) + "\"");
    }
    HANGAR_ASSIGN_OR_RETURN(removed, oci_.DeleteTag(repo.record.id, reference));
  }
  if (!removed) {
    return MakeError(ErrorCode::ManifestUnknown,
                     "manifest " + std::string(reference.substr(0, 200)) +
                         " is unknown to repository " + std::string(name));
  }
  return {};
}

Result<OciReferrers> OciService::ListReferrers(const Principal& who, std::string_view name,
                                               std::string_view digest,
                                               std::string_view artifact_type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Read));
  HANGAR_ASSIGN_OR_RETURN(auto subject, ParseDigest(digest));
  HANGAR_ASSIGN_OR_RETURN(auto found, oci_.ListReferrers(repo.record.id, subject.String(),
                                                         artifact_type, "", kMaxReferrers));
  json::array entries;
  std::set<std::string> seen;
  for (const auto& r : found) {
    json::object e{{"mediaType", r.media_type}, {"digest", r.digest}, {"size", r.size}};
    if (!r.artifact_type.empty()) e["artifactType"] = r.artifact_type;
    if (!r.annotations_json.empty()) {
      json::error_code ec;
      json::value a = json::parse(r.annotations_json, ec);
      if (!ec) e["annotations"] = std::move(a);
    }
    seen.insert(r.digest);
    entries.push_back(std::move(e));
  }
  // The referrers-tag schema (§6.2): an index clients kept under tag "<alg>-<hex>" before
  // the API existed; its entries count as referrers too.
  HANGAR_ASSIGN_OR_RETURN(auto tagged, oci_.GetTag(repo.record.id, ReferrersTag(subject)));
  if (tagged) {
    HANGAR_ASSIGN_OR_RETURN(auto index, oci_.GetManifest(repo.record.id, *tagged));
    json::error_code ec;
    json::value doc = index ? json::parse(index->body, ec) : json::value();
    const json::value* list =
        !ec && doc.is_object() ? doc.get_object().if_contains("manifests") : nullptr;
    if (list && list->is_array()) {
      for (const auto& v : list->get_array()) {
        if (!v.is_object()) continue;
        const auto& o = v.get_object();
        const json::value* d = o.if_contains("digest");
        if (!d || !d->is_string() || !seen.insert(std::string(d->get_string())).second) continue;
        if (!artifact_type.empty()) {
          const json::value* at = o.if_contains("artifactType");
          if (!at || !at->is_string() || at->get_string() != artifact_type) continue;
        }
        entries.push_back(v);
      }
    }
  }
  json::object index{
      {"schemaVersion", 2}, {"mediaType", kOciIndex}, {"manifests", std::move(entries)}};
  return OciReferrers{json::serialize(index), !artifact_type.empty()};
}

}  // namespace hangar::services

#include "services/oci/oci_projection.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <set>

#include "core/lru.h"
#include "core/oci_media_types.h"
#include "core/util.h"
#include "git/pointer.h"
#include "services/oci/oci_model_config.h"
#include "services/oci/oci_names.h"

namespace hangar::services {
namespace {

namespace json = boost::json;

// A manifest a registry must accept is at least 4 MiB (oci.md §5 step 1); a revision whose
// manifest would be larger is refused rather than served to clients that may reject it.
constexpr size_t kMaxManifestBytes = 4 << 20;
// A lower bound of one layer's JSON besides its path, which appears twice (title and
// filepath): media type, "sha256:<64 hex>" digest, size and the annotation keys.
constexpr size_t kMinLayerBytes = 200;
// Built manifests kept in memory, by total body bytes.
constexpr size_t kManifestCacheBytes = 64 << 20;
// Git blobs whose layer digest is kept in memory (about 100 bytes each).
constexpr size_t kBlobFactsEntries = 200000;
// README.md and config.json larger than this do not feed the model config.
constexpr uint64_t kMaxSideFileBytes = 1 << 20;
constexpr uint32_t kSymlinkMode = 0120000;
constexpr uint32_t kSubmoduleMode = 0160000;

// What one git blob becomes as a layer: for an LFS pointer, the object it names.
struct BlobFacts {
  Sha256 sha256;
  uint64_t size = 0;
  bool lfs = false;
};

// A manifest as built, with what storing it needs (kept in the cache so a row lost to a
// repo delete or a manifest DELETE can be stored again).
struct Built {
  ProjectedManifest manifest;
  std::string config;  // the config blob's bytes
  std::string artifact_type;
  std::string annotations_json;   // the manifest's annotations object
  std::vector<std::string> refs;  // config and layer digests, without duplicates
};

std::string BlobKey(const Oid& oid) {
  return std::string(reinterpret_cast<const char*>(oid.bytes.data()), oid.bytes.size());
}

bool IsLowerHex40(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The layers of a manifest, with what its config and its references need.
struct Layers {
  json::array layers;
  std::vector<std::string> diff_ids, weight_paths;
  std::set<std::string> refs;  // the layers' digests
};

// The regular files of `tree`: a symlink or submodule has no bytes an OCI puller could place.
std::vector<git::TreeEntry> RegularFiles(std::vector<git::TreeEntry> tree) {
  std::vector<git::TreeEntry> files;
  for (auto& e : tree) {
    if (e.is_dir || e.mode == kSymlinkMode || e.mode == kSubmoduleMode) continue;
    files.push_back(std::move(e));
  }
  return files;
}

// A lower bound of the size of the manifest listing `files`, known before any blob is read.
size_t MinManifestBytes(const std::vector<git::TreeEntry>& files) {
  size_t bytes = 0;
  for (const auto& e : files) bytes += kMinLayerBytes + 2 * e.path.size();
  return bytes;
}

// The refusal of a revision with `files` files whose manifest would be `bytes` long ("at
// least" when that is the `lower_bound`).
Error TooLarge(const RepoId& id, std::string_view reference, size_t files, size_t bytes,
               size_t lower_bound) {
  return MakeError(ErrorCode::ManifestInvalid,
                   "revision '" + std::string(reference) + "' of " + id.Id() + " has " +
                       std::to_string(files) + " files: its OCI manifest would be " +
                       (bytes == lower_bound ? "at least " : "") + std::to_string(bytes) +
                       " bytes, over the 4 MiB limit (oci.md §5); fetch it with git instead");
}

// The descriptor of the layer holding file `path`.
json::object LayerJson(const LayerClass& cls, const std::string& digest, uint64_t size,
                       const std::string& path) {
  json::object annotations;
  annotations[oci::kTitleKey] = path;
  annotations["org.cncf.model.filepath"] = path;
  if (cls.untested) annotations["org.cncf.model.file.mediatype.untested"] = "true";
  json::object layer;
  layer["mediaType"] = cls.media_type;
  layer["digest"] = digest;
  layer["size"] = size;
  layer["annotations"] = std::move(annotations);
  return layer;
}

// The manifest's annotations: the commit's time and id, and the repo's page when known.
json::object ManifestAnnotations(const std::string& created, const Oid& commit,
                                 const std::string& page) {
  json::object annotations;
  annotations["org.opencontainers.image.created"] = created;
  annotations["org.opencontainers.image.revision"] = commit.Hex();
  if (!page.empty()) annotations["org.opencontainers.image.source"] = page;
  return annotations;
}

// The manifest's bytes, from its config blob's descriptor, layers and annotations.
std::string ManifestBody(RepoType type, const std::string& artifact_type,
                         const std::string& config_digest, size_t config_size, json::array layers,
                         json::object annotations) {
  json::object config;
  config["mediaType"] = ConfigMediaTypeOf(type);
  config["digest"] = config_digest;
  config["size"] = config_size;
  json::object m;
  m["schemaVersion"] = 2;
  m["mediaType"] = kOciManifestType;
  m["artifactType"] = artifact_type;
  m["config"] = std::move(config);
  m["layers"] = std::move(layers);
  m["annotations"] = std::move(annotations);
  return json::serialize(m);
}

}  // namespace

struct OciProjection::Impl {
  git::RepoReader& reader;
  storage::BlobStore& blobs;
  db::OciStore& oci;
  std::string public_url;
  LruCache<std::shared_ptr<const Built>> manifests{kManifestCacheBytes};
  LruCache<BlobFacts> facts{kBlobFactsEntries};

  Result<std::optional<Oid>> Resolve(const RepoHandle& repo, std::string_view reference);
  Result<BlobFacts> FactsOf(const RepoHandle& repo, const git::TreeEntry& e);
  Result<BlobFacts> HashGitBlob(const RepoHandle& repo, const git::TreeEntry& e);
  Result<std::optional<std::string>> SideFile(const RepoHandle& repo,
                                              const std::vector<git::TreeEntry>& files,
                                              std::string_view path);
  Result<Layers> LayersOf(const RepoHandle& repo, RepoType type,
                          const std::vector<git::TreeEntry>& files);
  Result<std::string> ConfigOf(const RepoHandle& repo, const RepoId& id, const Oid& commit,
                               const std::vector<git::TreeEntry>& files, const std::string& created,
                               const std::string& page, std::vector<std::string> weight_paths,
                               std::vector<std::string> diff_ids);
  Result<std::shared_ptr<const Built>> Build(const RepoHandle& repo, const Oid& commit,
                                             std::string_view reference);
  Result<void> Persist(const RepoHandle& repo, const Built& b);
};

// A branch, then a git tag, of that exact name; or a full commit id (oci.md §12 table).
// HEAD, short ids, refs/pr/… and other revisions git would take are not references here.
Result<std::optional<Oid>> OciProjection::Impl::Resolve(const RepoHandle& repo,
                                                        std::string_view reference) {
  std::vector<std::string> tries;
  if (IsLowerHex40(reference)) tries.emplace_back(reference);
  tries.push_back("refs/heads/" + std::string(reference));
  tries.push_back("refs/tags/" + std::string(reference));
  for (const auto& t : tries) {
    auto oid = reader.ResolveRevision(repo.git_path, t);
    if (oid) return std::optional<Oid>(*oid);
    if (oid.error().code != ErrorCode::RevisionNotFound) return std::move(oid).error();
  }
  return std::optional<Oid>();
}

// Cached in memory per git blob oid; small git files' sha256 also in OciStore, where
// OpenBlob finds them (and a restart does not rehash them).
Result<BlobFacts> OciProjection::Impl::FactsOf(const RepoHandle& repo, const git::TreeEntry& e) {
  std::string key = BlobKey(e.oid);
  if (auto hit = facts.Get(key)) return *hit;
  BlobFacts f;
  if (e.size < git::kMaxPointerSize) {
    // Small enough to be an LFS pointer: read it (cheap) and look.
    HANGAR_ASSIGN_OR_RETURN(auto text, reader.ReadBlob(repo.git_path, e.oid, git::kMaxPointerSize));
    if (auto p = git::ParsePointer(text)) {
      f = {p->oid, p->size, true};
    } else {
      f = {Sha256::Of(text), text.size(), false};
      HANGAR_ASSIGN_OR_RETURN(auto known, oci.FindGitBlobByOid(e.oid.Hex()));
      if (!known) {
        if (auto put = oci.PutGitBlob({f.sha256, e.oid.Hex(), f.size}); !put)
          return std::move(put).error();
      }
    }
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto known, oci.FindGitBlobByOid(e.oid.Hex()));
    if (known) {
      f = {known->sha256, known->size, false};
    } else {
      auto hashed = HashGitBlob(repo, e);
      if (!hashed) return hashed;
      f = *hashed;
      if (auto put = oci.PutGitBlob({f.sha256, e.oid.Hex(), f.size}); !put)
        return std::move(put).error();
    }
  }
  facts.Put(key, f);
  return f;
}

Result<BlobFacts> OciProjection::Impl::HashGitBlob(const RepoHandle& repo,
                                                   const git::TreeEntry& e) {
  HANGAR_ASSIGN_OR_RETURN(auto src, reader.OpenBlob(repo.git_path, e.oid, 0, std::nullopt));
  Sha256Hasher hasher;
  uint64_t size = 0;
  std::array<char, 64 * 1024> buf;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto n, src->Read(buf));
    if (n == 0) break;
    hasher.Update(std::string_view(buf.data(), n));
    size += n;
  }
  return BlobFacts{hasher.Finish(), size, false};
}

// The text of top-level file `path` when the revision has it as a plain git file of at
// most kMaxSideFileBytes; nullopt otherwise.
Result<std::optional<std::string>> OciProjection::Impl::SideFile(
    const RepoHandle& repo, const std::vector<git::TreeEntry>& files, std::string_view path) {
  auto it = std::find_if(files.begin(), files.end(),
                         [&](const git::TreeEntry& e) { return e.path == path; });
  if (it == files.end() || it->size > kMaxSideFileBytes) return std::optional<std::string>();
  HANGAR_ASSIGN_OR_RETURN(auto text, reader.ReadBlob(repo.git_path, it->oid, kMaxSideFileBytes));
  if (git::ParsePointer(text)) return std::optional<std::string>();
  return std::optional<std::string>(std::move(text));
}

// A layer per file (in `files`' order), each the git blob or the LFS object it points to.
Result<Layers> OciProjection::Impl::LayersOf(const RepoHandle& repo, RepoType type,
                                             const std::vector<git::TreeEntry>& files) {
  Layers out;
  for (const auto& e : files) {
    HANGAR_ASSIGN_OR_RETURN(auto f, FactsOf(repo, e));
    LayerClass cls = ClassifyLayer(type, e.path, f.lfs);
    std::string digest = "sha256:" + f.sha256.Hex();
    out.layers.push_back(LayerJson(cls, digest, f.size, e.path));
    if (cls.is_weight) out.weight_paths.push_back(e.path);
    out.refs.insert(digest);
    out.diff_ids.push_back(std::move(digest));
  }
  return out;
}

// The config blob's bytes: a model's config (from its README.md, config.json, weight paths
// and layer digests), the empty config for other repo types.
Result<std::string> OciProjection::Impl::ConfigOf(
    const RepoHandle& repo, const RepoId& id, const Oid& commit,
    const std::vector<git::TreeEntry>& files, const std::string& created, const std::string& page,
    std::vector<std::string> weight_paths, std::vector<std::string> diff_ids) {
  if (id.type != RepoType::Model) return std::string(kEmptyConfig);
  ModelConfigInput in;
  in.created_at = created;
  in.name = id.name;
  in.doc_url = page;
  in.revision = commit.Hex();
  HANGAR_ASSIGN_OR_RETURN(auto readme, SideFile(repo, files, "README.md"));
  HANGAR_ASSIGN_OR_RETURN(auto config_json, SideFile(repo, files, "config.json"));
  in.readme = std::move(readme);
  in.config_json = std::move(config_json);
  in.weight_paths = std::move(weight_paths);
  in.diff_ids = std::move(diff_ids);
  return BuildModelConfig(in);
}

Result<std::shared_ptr<const Built>> OciProjection::Impl::Build(const RepoHandle& repo,
                                                                const Oid& commit,
                                                                std::string_view reference) {
  const RepoId id{repo.record.type, repo.record.ns, repo.record.name};
  HANGAR_ASSIGN_OR_RETURN(auto info, reader.ReadCommit(repo.git_path, commit));
  HANGAR_ASSIGN_OR_RETURN(auto tree, reader.ListTree(repo.git_path, commit, "", true));
  std::vector<git::TreeEntry> files = RegularFiles(std::move(tree));
  size_t lower_bound = MinManifestBytes(files);
  // Checked before hashing anything, so a huge tree costs no blob reads.
  if (lower_bound > kMaxManifestBytes) {
    return TooLarge(id, reference, files.size(), lower_bound, lower_bound);
  }
  std::sort(files.begin(), files.end(),
            [](const git::TreeEntry& a, const git::TreeEntry& b) { return a.path < b.path; });
  HANGAR_ASSIGN_OR_RETURN(auto layers, LayersOf(repo, id.type, files));

  auto built = std::make_shared<Built>();
  std::string created = Rfc3339Utc(info.committer_time);
  // Without a configured public_url the hub's address depends on each request's Host, which
  // must not change a digest: the source annotation and docURL are then left out.
  std::string page = public_url.empty() ? "" : public_url + "/" + id.UrlPath();
  HANGAR_ASSIGN_OR_RETURN(
      auto config, ConfigOf(repo, id, commit, files, created, page, std::move(layers.weight_paths),
                            std::move(layers.diff_ids)));
  built->config = std::move(config);
  std::string config_digest = "sha256:" + Sha256::Of(built->config).Hex();
  layers.refs.insert(config_digest);

  json::object annotations = ManifestAnnotations(created, commit, page);
  built->annotations_json = json::serialize(annotations);
  built->artifact_type = std::string(ArtifactTypeOf(id.type));
  std::string body =
      ManifestBody(id.type, built->artifact_type, config_digest, built->config.size(),
                   std::move(layers.layers), std::move(annotations));
  if (body.size() > kMaxManifestBytes) {
    return TooLarge(id, reference, files.size(), body.size(), lower_bound);
  }
  built->manifest.digest = "sha256:" + Sha256::Of(body).Hex();
  built->manifest.media_type = std::string(kOciManifestType);
  built->manifest.body = std::move(body);
  built->manifest.commit = commit.Hex();
  built->refs.assign(layers.refs.begin(), layers.refs.end());
  return std::shared_ptr<const Built>(std::move(built));
}

// Config blob into the blob store and linked to the repo; the manifest as an ordinary row
// with its references, so GET by digest, referrers and GC treat it as a pushed one.
Result<void> OciProjection::Impl::Persist(const RepoHandle& repo, const Built& b) {
  Sha256 config_sha = Sha256::Of(b.config);
  auto stat = blobs.Stat(config_sha);
  if (!stat && stat.error().code != ErrorCode::BlobUnknown) return std::move(stat).error();
  if (!stat) {
    HANGAR_ASSIGN_OR_RETURN(auto writer, blobs.Create(config_sha, b.config.size()));
    if (auto r = writer->Append(b.config); !r) return r;
    if (auto r = writer->Commit(); !r) return r;
  }
  int64_t now = NowUnix();
  if (auto r = oci.LinkBlob(repo.record.id, config_sha, b.config.size(), now); !r) return r;
  db::OciManifestRecord rec;
  rec.repo_id = repo.record.id;
  rec.digest = b.manifest.digest;
  rec.media_type = b.manifest.media_type;
  rec.body = b.manifest.body;
  rec.artifact_type = b.artifact_type;
  rec.annotations_json = b.annotations_json;
  rec.created_at = now;
  std::vector<db::OciManifestRef> refs;
  refs.reserve(b.refs.size());
  for (const auto& d : b.refs) refs.push_back({d, false});
  return oci.PutManifest(rec, refs);
}

OciProjection::OciProjection(git::RepoReader& reader, storage::BlobStore& blobs, db::OciStore& oci,
                             db::LfsStore& /*lfs*/, std::string public_url)
    : impl_(new Impl{reader, blobs, oci, std::move(public_url)}) {}
OciProjection::~OciProjection() = default;

Result<std::optional<ProjectedManifest>> OciProjection::Manifest(const RepoHandle& repo,
                                                                 std::string_view reference) {
  HANGAR_ASSIGN_OR_RETURN(auto commit, impl_->Resolve(repo, reference));
  if (!commit) return std::optional<ProjectedManifest>();
  // The repo's path is in the key: the source annotation names it, and a renamed repo
  // keeps its id.
  std::string key = std::to_string(repo.record.id) + "\n" +
                    RepoId{repo.record.type, repo.record.ns, repo.record.name}.UrlPath() + "\n" +
                    commit->Hex();
  if (auto hit = impl_->manifests.Get(key)) {
    // The row may be gone (manifest DELETE, repo deleted and its id reused): store again.
    HANGAR_ASSIGN_OR_RETURN(auto row,
                            impl_->oci.GetManifest(repo.record.id, (*hit)->manifest.digest));
    if (!row) {
      if (auto r = impl_->Persist(repo, **hit); !r) return std::move(r).error();
    }
    return std::optional<ProjectedManifest>((*hit)->manifest);
  }
  HANGAR_ASSIGN_OR_RETURN(auto built, impl_->Build(repo, *commit, reference));
  if (auto r = impl_->Persist(repo, *built); !r) return std::move(r).error();
  impl_->manifests.Put(key, built, built->manifest.body.size() + built->config.size());
  return std::optional<ProjectedManifest>(built->manifest);
}

Result<std::optional<ProjectedBlob>> OciProjection::OpenBlob(const RepoHandle& repo,
                                                             const Sha256& sha256,
                                                             storage::ByteRange range) {
  HANGAR_ASSIGN_OR_RETURN(auto rec, impl_->oci.FindGitBlobBySha256(sha256));
  if (!rec) return std::optional<ProjectedBlob>();
  auto oid = Oid::ParseHex(rec->git_oid);
  if (!oid) return std::optional<ProjectedBlob>();
  auto window = storage::ResolveRange(range, rec->size);
  // Only this repo's objects: a blob of another repo is unknown here, even for a bad range.
  auto body = impl_->reader.OpenBlob(repo.git_path, *oid, window ? window->offset : 0,
                                     window ? std::optional<uint64_t>(window->length) : 0);
  if (!body) {
    if (body.error().code == ErrorCode::EntryNotFound) return std::optional<ProjectedBlob>();
    return std::move(body).error();
  }
  if (!window) return std::move(window).error();
  return std::optional<ProjectedBlob>(ProjectedBlob{std::move(*body), rec->size});
}

Result<std::vector<std::string>> OciProjection::RevisionTags(const RepoHandle& repo) {
  HANGAR_ASSIGN_OR_RETURN(auto refs, impl_->reader.ListRefs(repo.git_path));
  std::vector<std::string> tags;
  for (const auto& r : refs) {
    std::string_view name = r.name;
    for (std::string_view prefix : {"refs/heads/", "refs/tags/"}) {
      if (name.substr(0, prefix.size()) != prefix) continue;
      std::string_view tag = name.substr(prefix.size());
      if (IsValidTag(tag)) tags.emplace_back(tag);
    }
  }
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

}  // namespace hangar::services

#pragma once
// OciService: the rules of the OCI registry (oci.md §3–§7; issue #5 points 1–2) over the
// hub's repos, its sha256 blob store and db::OciStore. Registry names map onto hub repos
// (services/oci/oci_names.h), found case-insensitively; permissions are the hub's (RepoService
// Open with Read/Write). Pushing to a repo that does not exist creates it (public) when
// the caller may create repos in that namespace.
//
// Blob uploads (§4) live in process memory: an open storage::BlobWriter, its offset and a
// per-upload mutex, keyed by a random UUID. At most `max_open_uploads` are open, and at
// most `max_open_uploads_per_user` of one user (so one pusher cannot lock everyone else
// out); one idle for `upload_idle` is dropped. A restart loses them (docs/oci.md: replicas need
// sticky routing for uploads). Bodies stream through BlobWriter: memory stays flat.
//
// A blob is readable in a repo when an OCI push or mount linked it there
// (OciStore::BlobLinked), when git-lfs linked it (LfsStore::IsLinked), or, failing both,
// when the repo projection serves it (OciProjection::OpenBlob).
//
// Thread-safe; every call blocks (database, blob store, git). Errors common to the calls
// that take a `name`: NameInvalid (bad or ambiguous name), RepoNotFound (no such repo or
// not readable), Unauthorized (anonymous caller needs more than Read), Forbidden.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/principal.h"
#include "core/result.h"
#include "db/lfs_store.h"
#include "db/oci_store.h"
#include "db/repo_store.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"
#include "services/oci/oci_manifest_doc.h"
#include "services/oci/oci_names.h"
#include "services/oci/oci_projection.h"
#include "services/repo/repo_service.h"
#include "storage/blob_store.h"
#include "storage/byte_range.h"

namespace hangar::services {

// The configured fields have no defaults of their own: config.h is their one source, and
// cli's App copies them (a test gives its own).
struct OciOptions {
  // Larger manifest PUTs: PayloadTooLarge (413) (config oci.max_manifest_bytes).
  uint64_t max_manifest_bytes = 0;
  size_t max_open_uploads = 0;  // uploads open at once; 0 = no limit (config oci.max_open_uploads)
  size_t max_open_uploads_per_user = 100;  // uploads one user has open at once; 0 = no limit
  // An upload untouched this long is dropped (config oci.upload_idle_s).
  std::chrono::seconds upload_idle{0};
  std::function<int64_t()> now;  // unix seconds; empty = NowUnix
};

// Where an upload stands (oci.md §4.4): its id and the bytes received so far.
struct OciUploadState {
  std::string id;       // UUID, the last segment of the upload Location
  uint64_t offset = 0;  // bytes received
};

// A chunk position from Content-Range "<first>-<last>" (inclusive, oci.md §2.1).
struct OciChunkRange {
  uint64_t first = 0;
  uint64_t last = 0;
};

// A blob about to be read: the caller picks the window once the size is known.
using OciRangeChooser = std::function<Result<storage::ByteRange>(uint64_t size)>;

// A blob opened for reading (oci.md §3.2).
struct OciBlobRead {
  std::unique_ptr<ByteSource> body;  // the chosen window; null for Stat
  uint64_t size = 0;                 // the whole blob, bytes
  uint64_t offset = 0;               // the window's first byte
  uint64_t length = 0;               // the window's length, bytes
  std::string digest;                // as requested ("sha256:…" or "sha512:…")
};

// A manifest to serve (oci.md §3.1).
struct OciManifestRead {
  std::string digest;      // Docker-Content-Digest
  std::string media_type;  // Content-Type
  std::string body;        // the exact bytes
};

// What a manifest PUT did (oci.md §5).
struct OciManifestPut {
  std::string digest;             // Location / Docker-Content-Digest
  std::string subject;            // OCI-Subject ("" when the manifest has none)
  std::vector<std::string> tags;  // tags now pointing at it (OCI-Tag)
};

// One page of names (tags or catalog), in byte order (oci.md §6.1).
struct OciNamePage {
  std::vector<std::string> names;
  bool more = false;  // another page follows (the handler sends a Link header)
};

// A referrers answer (oci.md §6.2).
struct OciReferrers {
  std::string body;             // the image index JSON
  bool filter_applied = false;  // OCI-Filters-Applied: artifactType
};

class OciService {
 public:
  OciService(RepoService& repos, AccessPolicy& access, db::RepoStore& repo_store,
             db::UserStore& users, db::OciStore& oci, db::LfsStore& lfs, storage::BlobStore& blobs,
             OciProjection& projection, OciOptions options = {});
  ~OciService();

  // ---- auth (the token endpoint, oci.md §9.2) ----
  // The highest access `who` has on the repo `name` names; Write when it does not exist but
  // `who` may create it; Read for a well-formed name that can be no hub repo (a pull of it
  // is 404). Errors: NameInvalid, RepoNotFound (neither readable nor creatable).
  Result<Access> AccessFor(const Principal& who, std::string_view name);
  // Whether `who` may push to `name`: write on its repo, or the right to create it there.
  // Creates nothing. The router's check of a push's head before its body is read.
  // Errors: those of StartUpload's repo check (NameInvalid, NameUnknown, Forbidden,
  // Unauthorized).
  Result<void> CheckPush(const Principal& who, std::string_view name);
  // The largest manifest PutManifest takes, bytes (OciOptions::max_manifest_bytes).
  uint64_t MaxManifestBytes() const { return static_cast<uint64_t>(options_.max_manifest_bytes); }

  // ---- uploads (oci.md §4; oci_uploads.cc) ----
  // Opens an upload (POST …/blobs/uploads/). `digest_algorithm` ("sha256" or "sha512",
  // end-4c) makes the upload hash sha512 as it goes. Errors: TooManyRequests (the
  // process's or the caller's cap reached), DigestInvalid (unsupported algorithm), and the common
  // ones.
  Result<OciUploadState> StartUpload(const Principal& who, std::string_view name,
                                     std::string_view digest_algorithm = "");
  // A whole blob in one request (POST ?digest=, §4.3): stores `body` if it matches
  // `digest` and links it. Errors: DigestInvalid (nothing stored), SizeInvalid
  // (`length` ≠ bytes received), TooManyRequests, BadRequest (body cut short).
  Result<std::string> PutBlob(const Principal& who, std::string_view name, std::string_view digest,
                              ByteSource& body, std::optional<uint64_t> length);
  // Mount (§4.5): links blob `digest` into `name` when `from` holds it and `who` may read
  // `from` (with `from` empty: when any repo `who` can read links it — see docs/oci.md),
  // returning true; false when the caller should upload instead. Errors: DigestInvalid,
  // and the common ones for `name` (never for `from`).
  Result<bool> Mount(const Principal& who, std::string_view name, std::string_view digest,
                     std::string_view from);
  // Uploads belong to the user who began them: the calls below answer BlobUploadUnknown
  // for another user's upload, as for a missing one (issue #13).
  // The upload's state (GET, end-13). Errors: BlobUploadUnknown (unknown, expired, of
  // another repo or of another user).
  Result<OciUploadState> UploadStatus(const Principal& who, std::string_view name,
                                      std::string_view id);
  // Appends `body` (PATCH, end-5) at `range.first` when given (it must equal the offset and
  // `length`, when given, the range's size), else at the offset. Errors: BlobUploadUnknown,
  // BlobUploadInvalid (416: out of order, overlap, gap), SizeInvalid, BadRequest (body cut
  // short: the bytes received are kept, the offset says how many).
  Result<OciUploadState> AppendUpload(const Principal& who, std::string_view name,
                                      std::string_view id, std::optional<OciChunkRange> range,
                                      ByteSource& body, std::optional<uint64_t> length);
  // Appends the final `body` (as AppendUpload), verifies `digest` and publishes the blob
  // (PUT, end-6); the upload is gone afterwards, also when the digest did not match.
  // Errors: DigestInvalid (nothing linked), those of AppendUpload.
  Result<std::string> FinishUpload(const Principal& who, std::string_view name, std::string_view id,
                                   std::string_view digest, std::optional<OciChunkRange> range,
                                   ByteSource& body, std::optional<uint64_t> length);
  // Drops the upload (DELETE, end-14). Errors: BlobUploadUnknown.
  Result<void> CancelUpload(const Principal& who, std::string_view name, std::string_view id);
  // Uploads open now (tests, metrics).
  size_t OpenUploads() const;

  // ---- blobs (oci.md §3.2, §7) ----
  // Size of blob `digest` as `name` holds it (HEAD). Errors: DigestInvalid, BlobUnknown.
  Result<OciBlobRead> StatBlob(const Principal& who, std::string_view name,
                               std::string_view digest);
  // Opens blob `digest` over the window `choose` picks. Errors: DigestInvalid,
  // BlobUnknown, RangeNotSatisfiable (from `choose`).
  Result<OciBlobRead> OpenBlob(const Principal& who, std::string_view name, std::string_view digest,
                               const OciRangeChooser& choose);
  // Unlinks the blob from the repo (DELETE, 202). Errors: DigestInvalid, BlobUnknown.
  Result<void> DeleteBlob(const Principal& who, std::string_view name, std::string_view digest);

  // ---- manifests (oci.md §3.1, §5, §7) ----
  // Validates and stores `body` under `reference` (a tag or a digest) and the extra
  // `tags` (end-7b). `content_type` is the request's (parameters ignored). Errors:
  // PayloadTooLarge, DigestInvalid, TagInvalid, ManifestInvalid, ManifestBlobUnknown,
  // BadRequest (body cut short).
  Result<OciManifestPut> PutManifest(const Principal& who, std::string_view name,
                                     std::string_view reference, std::string_view content_type,
                                     ByteSource& body, const std::vector<std::string>& tags);
  // The manifest `reference` names: a pushed tag first, else a revision of the repo (the
  // projection), or a digest. Errors: ManifestUnknown (also for malformed references).
  Result<OciManifestRead> GetManifest(const Principal& who, std::string_view name,
                                      std::string_view reference);
  // By tag: removes the tag. By digest: the manifest and its tags. Errors: ManifestUnknown,
  // DigestInvalid, TagInvalid.
  Result<void> DeleteManifest(const Principal& who, std::string_view name,
                              std::string_view reference);

  // ---- discovery (oci.md §6) ----
  // Pushed tags merged with the repo's revision tags, byte order, strictly after `last`,
  // at most `n` (nullopt = all). Errors: the common ones.
  Result<OciNamePage> ListTags(const Principal& who, std::string_view name, std::optional<int> n,
                               std::string_view last);
  // The referrers of `digest` (an image index), with the referrers-tag fallback entries.
  // Errors: DigestInvalid.
  Result<OciReferrers> ListReferrers(const Principal& who, std::string_view name,
                                     std::string_view digest, std::string_view artifact_type);
  // Registry names of the repos `who` can read, byte order, after `last`, at most `n`.
  Result<OciNamePage> Catalog(const Principal& who, std::optional<int> n, std::string_view last);

 private:
  struct Upload;
  struct Uploads;
  // What OpenRepo does when `name` names no repo yet: refuse (NameUnknown), create it when
  // `who` may, or check that `who` may create it and return an empty handle.
  enum class IfMissing { Fail, Create, CheckOnly };
  // The repo `name` names, opened for `needed`, or as `if_missing` says. Errors: the
  // common ones.
  Result<RepoHandle> OpenRepo(const Principal& who, std::string_view name, Access needed,
                              IfMissing if_missing = IfMissing::Fail);
  // The hub repo `name` names, with its stored spelling; nullopt when none exists.
  // Errors: NameInvalid.
  Result<std::optional<RepoId>> FindRepo(const OciName& name);
  // The namespace's stored spelling when `who` may create repos in it, else nullopt.
  std::optional<std::string> CreatableNamespace(const Principal& who, std::string_view ns);
  // The sha256 and size under which `repo` holds blob `digest`, or nullopt.
  Result<std::optional<std::pair<Sha256, uint64_t>>> LinkedBlob(const RepoHandle& repo,
                                                                const OciDigest& digest);
  // The open upload `id` of `repo` begun by `who`. Errors: BlobUploadUnknown (also for an
  // upload of another repo or another user).
  Result<std::shared_ptr<Upload>> FindUpload(const Principal& who, const RepoHandle& repo,
                                             std::string_view id);
  Result<void> AppendLocked(Upload& up, std::optional<OciChunkRange> range, ByteSource& body,
                            std::optional<uint64_t> length);
  // That `repo` holds what manifest `doc` references (oci.md §5 step 4): its blobs (a
  // projected git file counts; non-distributable layers are exempt) and child manifests
  // (its `subject` may come later); fills `refs` with them. Errors: ManifestBlobUnknown
  // naming up to five, Internal.
  Result<void> CheckReferences(const RepoHandle& repo, const OciManifestDoc& doc,
                               const std::string& subject, std::vector<db::OciManifestRef>& refs);
  // Publishes what `up` received as `digest`, links it into `repo`.
  Result<void> Publish(const RepoHandle& repo, Upload& up, const OciDigest& digest);
  void DropUpload(std::string_view id);
  int64_t Now() const;

  RepoService& repos_;
  AccessPolicy& access_;
  db::RepoStore& repo_store_;
  db::UserStore& users_;
  db::OciStore& oci_;
  db::LfsStore& lfs_;
  storage::BlobStore& blobs_;
  OciProjection& projection_;
  OciOptions options_;
  std::unique_ptr<Uploads> uploads_;
};

}  // namespace hangar::services

// OciService's blob uploads (oci.md §4): the in-memory upload table, chunk ordering,
// digest verification at the final PUT, single-request uploads and mounts.

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/util.h"
#include "services/oci/oci_service.h"

namespace hangar::services {

namespace {

// Bytes read from a request body per Append: memory per upload request stays at this.
constexpr size_t kCopyBytes = 1 << 20;

// A random (version 4) UUID: the upload id (oci.md §4.1 wants a UUID in the location).
std::string NewUuid() {
  std::string h = RandomHex(16);
  h[12] = '4';
  h[16] = "89ab"[h[16] % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

Error UnknownUpload(std::string_view id) {
  return MakeError(ErrorCode::BlobUploadUnknown,
                   "blob upload " + std::string(id.substr(0, 100)) + " is unknown or expired");
}

}  // namespace

// One upload. `mu` serializes the requests working on it; `closed` tells a request that
// waited for `mu` that the upload finished or failed meanwhile.
struct OciService::Upload {
  std::mutex mu;
  std::string id;
  int64_t repo_id = 0;
  // Who opened it: the only user who may feed, read, finish or cancel it (a co-writer who
  // learns the id is told it is unknown), and whose max_open_uploads_per_user it counts to.
  int64_t user_id = 0;
  std::unique_ptr<storage::BlobWriter> writer;
  std::optional<OciHasher> sha512;  // announced with ?digest-algorithm=sha512
  std::atomic<int64_t> last_used{0};
  bool closed = false;
};

struct OciService::Uploads {
  mutable std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<Upload>> open;
};

// Here rather than in oci_service.cc: they need Uploads complete.
OciService::OciService(RepoService& repos, AccessPolicy& access, db::RepoStore& repo_store,
                       db::UserStore& users, db::OciStore& oci, db::LfsStore& lfs,
                       storage::BlobStore& blobs, OciProjection& projection, OciOptions options)
    : repos_(repos),
      access_(access),
      repo_store_(repo_store),
      users_(users),
      oci_(oci),
      lfs_(lfs),
      blobs_(blobs),
      projection_(projection),
      options_(std::move(options)),
      uploads_(std::make_unique<Uploads>()) {}

OciService::~OciService() = default;

size_t OciService::OpenUploads() const {
  std::lock_guard lock(uploads_->mu);
  return uploads_->open.size();
}

void OciService::DropUpload(std::string_view id) {
  std::shared_ptr<Upload> up;
  {
    std::lock_guard lock(uploads_->mu);
    auto it = uploads_->open.find(std::string(id));
    if (it == uploads_->open.end()) return;
    up = std::move(it->second);
    uploads_->open.erase(it);
  }
  // The caller holds up->mu or the upload is idle: closing it here is safe either way.
  up->closed = true;
  if (up->writer) up->writer->Abort();
}

Result<OciUploadState> OciService::StartUpload(const Principal& who, std::string_view name,
                                               std::string_view digest_algorithm) {
  if (!digest_algorithm.empty() && digest_algorithm != "sha256" && digest_algorithm != "sha512") {
    return MakeError(ErrorCode::DigestInvalid, "unsupported digest-algorithm '" +
                                                   std::string(digest_algorithm.substr(0, 64)) +
                                                   "' (sha256 and sha512 are)");
  }
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write, IfMissing::Create));
  const int64_t now = Now();
  // The writer first: the cap checks and the insertion below then happen under one lock,
  // so concurrent POSTs cannot overshoot either cap.
  auto up = std::make_shared<Upload>();
  HANGAR_ASSIGN_OR_RETURN(up->writer, blobs_.Create(Sha256{}, std::nullopt));
  up->id = NewUuid();
  up->repo_id = repo.record.id;
  up->user_id = who.user_id;
  up->last_used = now;
  if (digest_algorithm == "sha512") up->sha512.emplace("sha512");
  // Expire idle uploads first; one a request is working on (mu held) is not idle.
  std::vector<std::shared_ptr<Upload>> expired;
  Result<void> admitted;
  {
    std::lock_guard lock(uploads_->mu);
    size_t mine = 0;  // the caller's open uploads
    for (auto it = uploads_->open.begin(); it != uploads_->open.end();) {
      Upload& u = *it->second;
      if (now - u.last_used.load() >= options_.upload_idle.count() && u.mu.try_lock()) {
        u.closed = true;
        u.mu.unlock();
        expired.push_back(std::move(it->second));
        it = uploads_->open.erase(it);
      } else {
        mine += u.user_id == who.user_id;
        ++it;
      }
    }
    if (options_.max_open_uploads != 0 && uploads_->open.size() >= options_.max_open_uploads) {
      admitted = MakeError(ErrorCode::TooManyRequests,
                           "too many blob uploads in progress (" +
                               std::to_string(options_.max_open_uploads) + "); retry later");
    } else if (options_.max_open_uploads_per_user != 0 &&
               mine >= options_.max_open_uploads_per_user) {
      // One pusher must not take every slot (oci_hardening: one user opening uploads
      // until the process cap locked every other pusher out).
      admitted = MakeError(ErrorCode::TooManyRequests,
                           "you have " + std::to_string(mine) +
                               " blob uploads in progress, the most one user may have open; " +
                               "finish or cancel some (DELETE the upload URL) or retry later");
    } else {
      uploads_->open.emplace(up->id, up);
    }
  }
  for (auto& u : expired) u->writer->Abort();
  if (!admitted) {
    up->writer->Abort();
    return std::move(admitted).error();
  }
  return OciUploadState{up->id, 0};
}

Result<std::shared_ptr<OciService::Upload>> OciService::FindUpload(const Principal& who,
                                                                   const RepoHandle& repo,
                                                                   std::string_view id) {
  std::shared_ptr<Upload> up;
  {
    std::lock_guard lock(uploads_->mu);
    auto it = uploads_->open.find(std::string(id));
    // Another repo's or another user's upload answers as a missing one, so neither its
    // existence nor its offset leaks (issue #13: co-writers must not append or finish).
    if (it == uploads_->open.end() || it->second->repo_id != repo.record.id ||
        it->second->user_id != who.user_id) {
      return UnknownUpload(id);
    }
    up = it->second;
  }
  if (Now() - up->last_used.load() >= options_.upload_idle.count()) {
    std::lock_guard lock(up->mu);
    DropUpload(id);
    return UnknownUpload(id);
  }
  return up;
}

Result<OciUploadState> OciService::UploadStatus(const Principal& who, std::string_view name,
                                                std::string_view id) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto up, FindUpload(who, repo, id));
  std::lock_guard lock(up->mu);
  if (up->closed) return UnknownUpload(id);
  return OciUploadState{up->id, up->writer->BytesWritten()};
}

Result<void> OciService::AppendLocked(Upload& up, std::optional<OciChunkRange> range,
                                      ByteSource& body, std::optional<uint64_t> length) {
  const uint64_t offset = up.writer->BytesWritten();
  std::optional<uint64_t> want = length;
  if (range) {
    if (range->last < range->first || range->first != offset) {
      return MakeError(ErrorCode::BlobUploadInvalid,
                       "chunk " + std::to_string(range->first) + "-" + std::to_string(range->last) +
                           " does not start at the upload's " + "offset " + std::to_string(offset) +
                           " (chunks must come in order, without gaps or overlaps)");
    }
    uint64_t size = range->last - range->first + 1;
    if (length && *length != size) {
      return MakeError(ErrorCode::SizeInvalid,
                       "Content-Length " + std::to_string(*length) +
                           " does not match Content-Range " + std::to_string(range->first) + "-" +
                           std::to_string(range->last) + " (" + std::to_string(size) + " bytes)");
    }
    want = size;
  }
  auto buf = std::make_unique<char[]>(kCopyBytes);
  uint64_t got = 0;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, body.Read(std::span<char>(buf.get(), kCopyBytes)));
    if (n == 0) break;
    if (want && n > *want - got) {
      return MakeError(ErrorCode::SizeInvalid,
                       "body is longer than the announced " + std::to_string(*want) + " bytes");
    }
    if (auto r = up.writer->Append(std::span<const char>(buf.get(), n)); !r) {
      DropUpload(up.id);  // the writer aborted itself: nothing of the upload is left
      return r;
    }
    if (up.sha512) up.sha512->Update(std::string_view(buf.get(), n));
    got += n;
    up.last_used = Now();
  }
  if (want && got != *want) {
    return MakeError(ErrorCode::SizeInvalid, "received " + std::to_string(got) +
                                                 " bytes, expected " + std::to_string(*want));
  }
  return {};
}

Result<OciUploadState> OciService::AppendUpload(const Principal& who, std::string_view name,
                                                std::string_view id,
                                                std::optional<OciChunkRange> range,
                                                ByteSource& body, std::optional<uint64_t> length) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto up, FindUpload(who, repo, id));
  std::lock_guard lock(up->mu);
  if (up->closed) return UnknownUpload(id);
  HANGAR_TRY(AppendLocked(*up, range, body, length));
  up->last_used = Now();
  return OciUploadState{up->id, up->writer->BytesWritten()};
}

Result<void> OciService::Publish(const RepoHandle& repo, Upload& up, const OciDigest& digest) {
  const uint64_t size = up.writer->BytesWritten();
  Sha256 sha256;
  if (digest.algorithm == "sha256") {
    // Nothing becomes visible when the bytes do not match (BlobWriter::CommitAs).
    HANGAR_ASSIGN_OR_RETURN(sha256, up.writer->CommitAs(Sha256::ParseHex(digest.encoded)));
  } else {
    if (up.sha512) {
      OciDigest actual = up.sha512->Finish();
      up.sha512.reset();
      if (actual != digest) {
        up.writer->Abort();
        return MakeError(
            ErrorCode::DigestInvalid,
            "digest " + digest.String() + " does not match the content (" + actual.String() + ")");
      }
      HANGAR_ASSIGN_OR_RETURN(sha256, up.writer->CommitAs(std::nullopt));
    } else {
      // Not announced: the bytes are stored under their sha256 and hashed again with the
      // client's algorithm. On a mismatch they stay unlinked, so unreadable, and GC
      // removes them after the grace.
      HANGAR_ASSIGN_OR_RETURN(sha256, up.writer->CommitAs(std::nullopt));
      HANGAR_ASSIGN_OR_RETURN(auto src, blobs_.Open(sha256, storage::ByteRange{}));
      OciHasher h(digest.algorithm);
      auto buf = std::make_unique<char[]>(kCopyBytes);
      for (;;) {
        HANGAR_ASSIGN_OR_RETURN(size_t n, src->Read(std::span<char>(buf.get(), kCopyBytes)));
        if (n == 0) break;
        h.Update(std::string_view(buf.get(), n));
      }
      OciDigest actual = h.Finish();
      if (actual != digest) {
        return MakeError(
            ErrorCode::DigestInvalid,
            "digest " + digest.String() + " does not match the content (" + actual.String() + ")");
      }
    }
    HANGAR_TRY(oci_.PutAlias(digest.String(), sha256, size));
  }
  return oci_.LinkBlob(repo.record.id, sha256, size, Now());
}

Result<std::string> OciService::FinishUpload(const Principal& who, std::string_view name,
                                             std::string_view id, std::string_view digest,
                                             std::optional<OciChunkRange> range, ByteSource& body,
                                             std::optional<uint64_t> length) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto up, FindUpload(who, repo, id));
  std::lock_guard lock(up->mu);
  if (up->closed) return UnknownUpload(id);
  // A malformed digest leaves the upload open: the client may PUT again.
  HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(digest));
  HANGAR_TRY(AppendLocked(*up, range, body, length));
  auto published = Publish(repo, *up, parsed);
  DropUpload(id);  // done, or failed verification: either way the upload is over
  if (!published) return std::move(published).error();
  return parsed.String();
}

Result<void> OciService::CancelUpload(const Principal& who, std::string_view name,
                                      std::string_view id) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto up, FindUpload(who, repo, id));
  std::lock_guard lock(up->mu);
  if (up->closed) return UnknownUpload(id);
  DropUpload(id);
  return {};
}

Result<std::string> OciService::PutBlob(const Principal& who, std::string_view name,
                                        std::string_view digest, ByteSource& body,
                                        std::optional<uint64_t> length) {
  HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(digest));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write, IfMissing::Create));
  Upload up;  // a private upload, never in the table
  up.id = "(single request)";
  if (parsed.algorithm == "sha256") {
    HANGAR_ASSIGN_OR_RETURN(up.writer, blobs_.Create(Sha256{}, length));
  } else {
    HANGAR_ASSIGN_OR_RETURN(up.writer, blobs_.Create(Sha256{}, length));
    up.sha512.emplace(parsed.algorithm);
  }
  std::lock_guard lock(up.mu);
  HANGAR_TRY(AppendLocked(up, std::nullopt, body, length));
  HANGAR_TRY(Publish(repo, up, parsed));
  return parsed.String();
}

Result<bool> OciService::Mount(const Principal& who, std::string_view name, std::string_view digest,
                               std::string_view from) {
  HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(digest));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write, IfMissing::Create));
  // Without `from` Hangar does not search other repos (docs/oci.md): the client uploads.
  if (from.empty()) return false;
  auto source = OpenRepo(who, from, Access::Read);
  if (!source) return false;  // unknown or unreadable: answered like a plain POST
  HANGAR_ASSIGN_OR_RETURN(auto linked, LinkedBlob(*source, parsed));
  if (!linked) return false;
  HANGAR_TRY(oci_.LinkBlob(repo.record.id, linked->first, linked->second, Now()));
  return true;
}

}  // namespace hangar::services

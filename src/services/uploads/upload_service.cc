#include "services/uploads/upload_service.h"

#include <algorithm>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {

namespace {

Error UploadNotFound(const std::string& id, std::string_view why = "not found") {
  return MakeError(ErrorCode::NotFound, "upload " + id + " " + std::string(why));
}

// Part `n` (1-based) of `u`: its first byte and its length.
std::pair<uint64_t, uint64_t> PartWindow(const db::UploadRecord& u, uint64_t n) {
  uint64_t offset = (n - 1) * u.part_size;
  return {offset, std::min(u.part_size, u.size - offset)};
}

}  // namespace

UploadService::UploadService(RepoService& repos, db::RepoStore& repo_rows, db::UploadStore& uploads,
                             db::LfsStore& links, storage::BlobStore& blobs,
                             UploadServiceOptions options)
    : repos_(repos),
      repo_rows_(repo_rows),
      uploads_(uploads),
      links_(links),
      blobs_(blobs),
      options_(std::move(options)) {}

int64_t UploadService::Now() const { return options_.now ? options_.now() : NowUnix(); }

uint64_t UploadService::PartSizeFor(uint64_t size, std::optional<uint64_t> hint) const {
  uint64_t part = std::clamp(hint.value_or(options_.default_part_bytes), kMinUploadPartBytes,
                             kMaxUploadPartBytes);
  return std::max(part, (size + kMaxUploadParts - 1) / kMaxUploadParts);
}

Result<UploadStart> UploadService::Create(const Principal& who, const RepoId& repo,
                                          const Sha256& sha256, int64_t size,
                                          std::optional<uint64_t> part_size_hint) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle handle, repos_.Open(who, repo, Access::Write));
  if (size < 0) return MakeError(ErrorCode::BadRequest, "'size' must not be negative");
  const uint64_t bytes = static_cast<uint64_t>(size);
  if (bytes > kMaxUploadBytes) {
    return MakeError(ErrorCode::PayloadTooLarge,
                     "uploads are limited to " + std::to_string(kMaxUploadBytes) + " bytes");
  }
  if (options_.max_object_bytes && bytes > options_.max_object_bytes) {
    return MakeError(ErrorCode::PayloadTooLarge, "files larger than " +
                                                     std::to_string(options_.max_object_bytes) +
                                                     " bytes are not accepted");
  }
  const int64_t repo_id = handle.record.id;
  HANGAR_ASSIGN_OR_RETURN(auto linked, links_.IsLinked(repo_id, sha256));
  // Linked but gone from the store (lost, or a GC race): take the bytes again to repair it.
  if (linked && !blobs_.Stat(sha256).has_value()) linked.reset();
  if (linked) {
    if (*linked != bytes) {
      return MakeError(ErrorCode::SizeInvalid, "this repo has object " + sha256.Hex() + " with " +
                                                   std::to_string(*linked) + " bytes, not " +
                                                   std::to_string(bytes));
    }
    return UploadStart{true, false, {}};
  }
  if (bytes == 0) {  // nothing to send: store the empty blob (its digest is checked) and link
    HANGAR_ASSIGN_OR_RETURN(auto writer, blobs_.Create(sha256, 0));
    HANGAR_TRY(writer->Commit());
    HANGAR_TRY(links_.Link(repo_id, sha256, 0));
    return UploadStart{true, false, {}};
  }

  bool resumed = false;
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Begin(repo_id, who.user_id, sha256, bytes,
                                                    PartSizeFor(bytes, part_size_hint), &resumed));
  HANGAR_ASSIGN_OR_RETURN(UploadView view, View(std::move(u)));
  return UploadStart{false, resumed, std::move(view)};
}

Result<db::UploadRecord> UploadService::Begin(int64_t repo_id, int64_t user_id,
                                              const Sha256& sha256, uint64_t size,
                                              uint64_t part_size, bool* resumed) {
  const int64_t now = Now();
  HANGAR_ASSIGN_OR_RETURN(auto open, uploads_.FindOpen(repo_id, user_id, sha256, size, now));
  if (open) {
    auto parts = blobs_.ListParts(open->store_handle);
    if (parts) {
      if (resumed) *resumed = true;
      return std::move(*open);
    }
    if (parts.error().code != ErrorCode::NotFound) return std::move(parts).error();
    HANGAR_TRY(uploads_.Delete(open->id));  // its staging area is gone: start afresh
  }
  std::lock_guard lock(begin_mu_);
  if (options_.max_open_per_user > 0) {
    HANGAR_ASSIGN_OR_RETURN(int64_t open_now, uploads_.CountOpen(user_id, now));
    if (open_now >= options_.max_open_per_user) {
      return MakeError(ErrorCode::TooManyRequests,
                       "you have " + std::to_string(open_now) +
                           " open uploads; complete or abort some (DELETE /api/uploads/{id})");
    }
  }
  db::UploadRecord u;
  u.id = RandomHex(16);
  u.repo_id = repo_id;
  u.user_id = user_id;
  u.sha256 = sha256;
  u.size = size;
  u.part_size = part_size;
  u.created_at = now;
  u.expires_at = now + options_.expiry.count();
  HANGAR_ASSIGN_OR_RETURN(u.store_handle, blobs_.BeginParts(u.id, u.size, u.part_size));
  if (auto made = uploads_.Create(u); !made) {
    (void)blobs_.AbortParts(u.store_handle);
    return std::move(made).error();
  }
  if (resumed) *resumed = false;
  return u;
}

Result<db::UploadRecord> UploadService::Lookup(const std::string& id, int64_t repo_id,
                                               const Sha256& sha256, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto u, uploads_.Get(id));
  if (!u || u->repo_id != repo_id || u->sha256 != sha256 || u->size != size) {
    return UploadNotFound(id.substr(0, 64));
  }
  if (!u->completed_at && u->expires_at < Now()) return UploadNotFound(id, "has expired");
  return std::move(*u);
}

Result<db::UploadRecord> UploadService::Find(const Principal& who, const std::string& id) {
  if (who.anonymous) {
    return MakeError(ErrorCode::Unauthorized, "uploads need a token (Authorization: Bearer)");
  }
  HANGAR_ASSIGN_OR_RETURN(auto u, uploads_.Get(id));
  // Someone else's upload reads as missing: ids are not secrets to be probed for.
  if (!u || u->user_id != who.user_id) return UploadNotFound(id);
  if (!u->completed_at && u->expires_at < Now()) return UploadNotFound(id, "has expired");
  return std::move(*u);
}

Result<UploadView> UploadService::View(db::UploadRecord record) {
  UploadView view;
  view.complete = record.completed_at.has_value();
  if (!view.complete) {
    HANGAR_ASSIGN_OR_RETURN(view.parts, PartsOf(record));
    if (options_.direct_parts) {
      for (uint64_t n = 1; n <= record.PartCount(); ++n) {
        HANGAR_ASSIGN_OR_RETURN(std::string url,
                                blobs_.PartUrl(record.store_handle, n, PartWindow(record, n).second,
                                               options_.part_url_ttl));
        if (url.empty()) break;  // the store takes parts only through Hangar
        view.part_urls.push_back(std::move(url));
      }
    }
  }
  view.record = std::move(record);
  return view;
}

Result<std::vector<storage::PartInfo>> UploadService::PartsOf(const db::UploadRecord& upload) {
  if (upload.completed_at) return std::vector<storage::PartInfo>{};
  auto parts = blobs_.ListParts(upload.store_handle);
  if (!parts && parts.error().code == ErrorCode::NotFound) {
    return UploadNotFound(upload.id, "has no parts area");
  }
  return parts;
}

Result<UploadView> UploadService::Get(const Principal& who, const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Find(who, id));
  return View(std::move(u));
}

namespace {

// Upload `u`'s part `number` is one to send, `content_length` (when known) long: its
// window. Errors: NotFound (complete, no such part), SizeInvalid.
Result<std::pair<uint64_t, uint64_t>> PartToSend(const db::UploadRecord& u, uint64_t number,
                                                 std::optional<uint64_t> content_length) {
  const std::string& id = u.id;
  if (u.completed_at) return UploadNotFound(id, "is already complete");
  if (number < 1 || number > u.PartCount()) {
    return MakeError(ErrorCode::NotFound, "upload " + id + " has no part " +
                                              std::to_string(number) + " (it has " +
                                              std::to_string(u.PartCount()) + " parts)");
  }
  auto [offset, length] = PartWindow(u, number);
  if (content_length && *content_length != length) {
    return MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(number) + " must be " +
                                                 std::to_string(length) + " bytes, not " +
                                                 std::to_string(*content_length));
  }
  return std::make_pair(offset, length);
}

}  // namespace

Result<void> UploadService::CheckPart(const Principal& who, const std::string& id, uint64_t number,
                                      std::optional<uint64_t> content_length) {
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Find(who, id));
  return CheckPartOf(u, number, content_length);
}

Result<void> UploadService::CheckPartOf(const db::UploadRecord& upload, uint64_t number,
                                        std::optional<uint64_t> content_length) {
  HANGAR_TRY(PartToSend(upload, number, content_length));
  return {};
}

Result<storage::PartInfo> UploadService::PutPart(const Principal& who, const std::string& id,
                                                 uint64_t number, ByteSource& body,
                                                 std::optional<uint64_t> content_length,
                                                 std::optional<Sha256> part_sha256) {
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Find(who, id));
  return PutPartOf(u, number, body, content_length, part_sha256);
}

Result<storage::PartInfo> UploadService::PutPartOf(const db::UploadRecord& upload, uint64_t number,
                                                   ByteSource& body,
                                                   std::optional<uint64_t> content_length,
                                                   std::optional<Sha256> part_sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto window, PartToSend(upload, number, content_length));
  auto [offset, length] = window;
  HANGAR_ASSIGN_OR_RETURN(
      storage::PartInfo part,
      blobs_.PutPart(upload.store_handle, number, offset, length, body, part_sha256));
  HANGAR_TRY(uploads_.SetExpiry(upload.id, Now() + options_.expiry.count()));
  return part;
}

Result<UploadView> UploadService::Complete(const Principal& who, const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Find(who, id));
  if (!u.completed_at) {
    HANGAR_ASSIGN_OR_RETURN(db::RepoRecord repo, repo_rows_.FindById(u.repo_id));
    HANGAR_TRY(repos_.Open(who, repo.Id(), Access::Write));
    HANGAR_TRY(CompleteOf(u));
  }
  return View(std::move(u));
}

Result<void> UploadService::CompleteOf(db::UploadRecord& upload) {
  if (upload.completed_at) return {};
  auto done = blobs_.CompleteParts(upload.store_handle, upload.sha256, upload.size);
  if (!done) {
    ErrorCode code = done.error().code;
    if (code == ErrorCode::DigestInvalid || code == ErrorCode::SizeInvalid) {
      HANGAR_TRY(uploads_.Delete(upload.id));  // the store dropped the parts; start again
    }
    return done;
  }
  HANGAR_TRY(links_.Link(upload.repo_id, upload.sha256, upload.size));
  const int64_t now = Now();
  HANGAR_TRY(uploads_.MarkCompleted(upload.id, now, now + options_.expiry.count()));
  upload.completed_at = now;
  return {};
}

Result<void> UploadService::Abort(const Principal& who, const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord u, Find(who, id));
  if (!u.completed_at) HANGAR_TRY(blobs_.AbortParts(u.store_handle));
  return uploads_.Delete(id);
}

Result<size_t> UploadService::RemoveExpired(bool dry_run, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto expired, uploads_.ListExpired(Now(), limit));
  if (dry_run) return expired.size();
  for (const auto& u : expired) {
    if (!u.completed_at) HANGAR_TRY(blobs_.AbortParts(u.store_handle));
    HANGAR_TRY(uploads_.Delete(u.id));
    Log("uploads")->info("removed expired upload {} ({} bytes of sha256:{})", u.id, u.size,
                         u.sha256.Hex());
  }
  return expired.size();
}

Result<bool> UploadService::IsKnownStaging(const std::string& handle) {
  // Handles start with the 32-hex key the upload row is named by (BlobStore::BeginParts).
  HANGAR_ASSIGN_OR_RETURN(auto u, uploads_.Get(handle.substr(0, 32)));
  return u.has_value();
}

}  // namespace hangar::services

// LfsService's HF multipart transfer (hf-api.md §7.4). A multipart object is an upload of
// UploadService's, like a native one: the batch begins (or resumes) it, the part URLs carry
// its id beside the ticket, each part goes durably into its blob store staging area (S3
// parts when blobs are on S3), and the completion joins them there. An upload nobody
// completes expires, and GC removes it with its parts.

#include <algorithm>
#include <vector>

#include "services/lfs/lfs_service.h"

namespace hangar::services {

namespace {

// "W/\"abc\"" / "\"abc\"" / "abc" → "abc" (clients echo the ETag header as received).
std::string_view BareEtag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

Error PartError(uint64_t number, std::string_view what) {
  return MakeError(ErrorCode::BadRequest,
                   "part " + std::to_string(number) + " " + std::string(what));
}

}  // namespace

uint64_t LfsService::ChunkSizeFor(uint64_t size) const {
  uint64_t chunk = std::max<uint64_t>(options_.multipart_chunk_bytes, 1);
  uint64_t smallest = (size + kMaxMultipartParts - 1) / kMaxMultipartParts;
  return std::max(chunk, smallest);
}

Result<void> LfsService::AnswerUpload(const Principal& who, const RepoHandle& repo,
                                      const Sha256& oid, bool multipart_offered,
                                      LfsBatchObjectResult& r) {
  const uint64_t size = static_cast<uint64_t>(r.size);
  if (!multipart_offered || options_.multipart_threshold == 0 ||
      size < options_.multipart_threshold) {
    return {};  // basic
  }
  auto upload = uploads_.Begin(repo.record.id, who.user_id, oid, size, ChunkSizeFor(size));
  if (!upload) {
    if (upload.error().code != ErrorCode::TooManyRequests) return std::move(upload).error();
    // Over the user's open-upload limit: this object is refused, the batch goes on.
    r.ticket.reset();
    r.error = LfsBatchObjectResult::ObjectError{429, upload.error().message};
    return {};
  }
  r.chunk_size = upload->part_size;  // a resumed upload keeps the part size it began with
  r.upload_id = upload->id;
  return {};
}

Result<std::pair<TicketClaims, db::UploadRecord>> LfsService::StagedUpload(
    std::string_view ticket, const Sha256& oid, const std::string& upload) {
  HANGAR_ASSIGN_OR_RETURN(TicketClaims claims, CheckTicket(ticket, oid, TicketOp::Upload));
  HANGAR_ASSIGN_OR_RETURN(db::UploadRecord staged,
                          uploads_.Lookup(upload, claims.repo_id, oid, claims.size));
  // Another user's upload of the same object reads as missing, as in the native API.
  if (staged.user_id != claims.user_id) {
    return MakeError(ErrorCode::NotFound, "upload " + upload + " not found");
  }
  return std::make_pair(std::move(claims), std::move(staged));
}

Result<TicketClaims> LfsService::CheckPart(std::string_view ticket, const Sha256& oid,
                                           const std::string& upload, uint64_t part,
                                           std::optional<uint64_t> content_length) {
  HANGAR_ASSIGN_OR_RETURN(auto staged, StagedUpload(ticket, oid, upload));
  HANGAR_TRY(uploads_.CheckPartOf(staged.second, part, content_length));
  return std::move(staged.first);
}

Result<std::string> LfsService::UploadPart(std::string_view ticket, const Sha256& oid,
                                           const std::string& upload, uint64_t part,
                                           ByteSource& body,
                                           std::optional<uint64_t> content_length) {
  HANGAR_ASSIGN_OR_RETURN(auto staged, StagedUpload(ticket, oid, upload));
  HANGAR_ASSIGN_OR_RETURN(
      storage::PartInfo stored,
      uploads_.PutPartOf(staged.second, part, body, content_length, std::nullopt));
  return "\"" + stored.etag + "\"";
}

Result<void> LfsService::CompleteMultipart(std::string_view ticket, const Sha256& oid,
                                           const std::string& upload,
                                           const std::vector<LfsPartRef>& parts) {
  HANGAR_ASSIGN_OR_RETURN(auto staged, StagedUpload(ticket, oid, upload));
  db::UploadRecord& u = staged.second;
  if (u.completed_at) return {};  // a completion sent again (its answer was lost)
  const uint64_t count = u.PartCount();
  // Each part number 1..count exactly once, in any order, with the tag its PUT answered.
  std::vector<const LfsPartRef*> listed(count, nullptr);
  for (const auto& p : parts) {
    if (p.number < 1 || p.number > count) {
      return PartError(p.number,
                       "does not exist (the object has " + std::to_string(count) + " parts)");
    }
    if (listed[p.number - 1] != nullptr) return PartError(p.number, "is listed twice");
    listed[p.number - 1] = &p;
  }
  HANGAR_ASSIGN_OR_RETURN(auto stored, uploads_.PartsOf(u));
  std::vector<const storage::PartInfo*> have(count, nullptr);
  for (const auto& p : stored) {
    if (p.number >= 1 && p.number <= count) have[p.number - 1] = &p;
  }
  for (uint64_t i = 1; i <= count; ++i) {
    if (listed[i - 1] == nullptr) return PartError(i, "is not listed");
    if (have[i - 1] == nullptr) return PartError(i, "has not been uploaded; upload it again");
    if (BareEtag(listed[i - 1]->etag) != have[i - 1]->etag) {
      return PartError(i, "was uploaded again since: its etag is not the one given");
    }
  }
  auto done = uploads_.CompleteOf(u);
  if (!done && done.error().code == ErrorCode::Conflict) {
    // A part vanished between the listing and the join (aborted meanwhile).
    return MakeError(ErrorCode::BadRequest, done.error().message);
  }
  return done;
}

}  // namespace hangar::services

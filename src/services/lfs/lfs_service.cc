#include "services/lfs/lfs_service.h"

#include <algorithm>
#include <vector>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {

namespace {

constexpr size_t kUploadChunk = 256 * 1024;

bool HashAlgoIsSha256(const std::optional<std::string>& algo) {
  return !algo || *algo == "sha256" || *algo == "sha_256";
}

LfsBatchObjectResult::ObjectError ObjectError(int code, std::string message) {
  return LfsBatchObjectResult::ObjectError{code, std::move(message)};
}

}  // namespace

LfsService::LfsService(RepoService& repos, db::LfsStore& links, storage::BlobStore& blobs,
                       UploadService& uploads, std::string key, LfsServiceOptions options)
    : repos_(repos),
      links_(links),
      blobs_(blobs),
      uploads_(uploads),
      key_(std::move(key)),
      options_(std::move(options)) {
  if (key_.empty()) Log("services")->error("LfsService: empty signing key; tickets will fail");
}

int64_t LfsService::Now() const { return options_.now ? options_.now() : NowUnix(); }

Result<RepoHandle> LfsService::OpenRepo(const Principal& who, const RepoId& repo, Access needed) {
  auto handle = repos_.Open(who, repo, needed);
  if (!handle && who.anonymous && handle.error().code == ErrorCode::RepoNotFound) {
    // git-lfs only sends credentials after a 401 (git-lfs.md §11.3); a 404 would end a
    // clone of a private repo. Missing and private repos look the same to anonymous callers.
    return MakeError(ErrorCode::Unauthorized, "Credentials needed for " + repo.UrlPath());
  }
  return handle;
}

Result<LfsBatchResult> LfsService::Batch(const Principal& who, const RepoId& repo,
                                         const LfsBatchRequest& request) {
  bool upload = request.operation == LfsOperation::Upload;
  HANGAR_ASSIGN_OR_RETURN(auto handle, OpenRepo(who, repo, upload ? Access::Write : Access::Read));

  if (!HashAlgoIsSha256(request.hash_algo)) {
    return MakeError(ErrorCode::Unprocessable,
                     "unsupported hash_algo '" + *request.hash_algo + "'; only sha256");
  }
  if (request.objects.empty()) {
    return MakeError(ErrorCode::Unprocessable, "objects must list at least one object");
  }
  if (request.objects.size() > std::max<size_t>(options_.max_objects, 1)) {
    return MakeError(ErrorCode::PayloadTooLarge,
                     "too many objects in one batch: " + std::to_string(request.objects.size()) +
                         " > " + std::to_string(options_.max_objects));
  }

  LfsBatchResult out;
  out.operation = request.operation;
  out.expires_in = options_.ticket_ttl.count();
  int64_t expires_at = Now() + out.expires_in;
  // git-lfs never lists "multipart" (hf-api.md §7.4): it keeps getting basic.
  bool multipart_offered = upload && std::find(request.transfers.begin(), request.transfers.end(),
                                               "multipart") != request.transfers.end();
  out.objects.reserve(request.objects.size());
  for (const auto& obj : request.objects) {
    HANGAR_ASSIGN_OR_RETURN(
        auto r, AnswerObject(who, handle, request.operation, obj, expires_at, multipart_offered));
    if (r.chunk_size != 0) out.transfer = "multipart";
    out.objects.push_back(std::move(r));
  }
  return out;
}

std::optional<LfsBatchObjectResult::ObjectError> LfsService::InvalidObject(LfsOperation op,
                                                                           bool oid_valid,
                                                                           int64_t size) const {
  if (!oid_valid)
    return ObjectError(422, "Invalid object id: must be 64 lower-case hex characters");
  if (size < 0) return ObjectError(422, "Invalid size: must be a non-negative integer");
  // No store takes more than kMaxUploadBytes (S3's 5 TiB) in one object; a configured
  // limit may be lower.
  const uint64_t limit = options_.max_object_bytes != 0
                             ? std::min(options_.max_object_bytes, kMaxUploadBytes)
                             : kMaxUploadBytes;
  if (op == LfsOperation::Upload && static_cast<uint64_t>(size) > limit) {
    return ObjectError(422,
                       "Object is larger than the limit of " + std::to_string(limit) + " bytes");
  }
  return std::nullopt;
}

Result<LfsBatchObjectResult> LfsService::AnswerObject(const Principal& who, const RepoHandle& repo,
                                                      LfsOperation op, const LfsBatchObject& obj,
                                                      int64_t expires_at, bool multipart_offered) {
  LfsBatchObjectResult r;
  r.oid = obj.oid;
  r.size = obj.size;
  auto oid = Sha256::ParseHex(obj.oid);
  r.error = InvalidObject(op, oid.has_value(), obj.size);
  if (r.error) return r;
  const uint64_t size = static_cast<uint64_t>(obj.size);

  HANGAR_ASSIGN_OR_RETURN(auto linked, links_.IsLinked(repo.record.id, *oid));

  TicketClaims claims;
  claims.repo_id = repo.record.id;
  // A download link names its holder, checked again when it is used
  // (RepoService::CheckLinkHolder); a deploy key as its negated id.
  claims.user_id =
      op == LfsOperation::Download && who.deploy_key_id != 0 ? -who.deploy_key_id : who.user_id;
  claims.oid = *oid;
  claims.expires_at = expires_at;

  if (op == LfsOperation::Upload) {
    // Linked and still stored: no actions, the client skips it. Linked but gone from the
    // store (lost, or removed by a GC race): ask for the bytes again, so a push repairs it.
    if (linked.has_value() && blobs_.Stat(*oid).has_value()) {
      if (*linked == size) return r;
      r.error = ObjectError(422, "Object " + obj.oid + " is stored with size " +
                                     std::to_string(*linked) + ", not " + std::to_string(size));
      return r;
    }
    // Not linked here. Even if the blob store holds it (another repo uploaded it), the
    // client must send the bytes: linking on a hash alone would hand out others' data.
    claims.op = TicketOp::Upload;
    claims.size = size;
    r.ticket = IssueTicket(key_, claims);
    HANGAR_TRY(AnswerUpload(who, repo, *oid, multipart_offered, r));
    return r;
  }

  // Download: only objects this repo links, and that the store still has; or a
  // pull-through cache's objects, which the transfer brings (Download).
  if (!linked.has_value() && missing_ != nullptr && missing_->Fills(repo.record.id)) {
    claims.op = TicketOp::Download;
    claims.size = size;
    r.ticket = IssueTicket(key_, claims);  // through Hangar: the transfer fetches it
    return r;
  }
  if (!linked.has_value()) {
    r.error = ObjectError(404, "Object does not exist");
    return r;
  }
  auto stored = blobs_.Stat(*oid);
  if (!stored) {
    if (stored.error().code != ErrorCode::BlobUnknown) return std::move(stored).error();
    Log("services")
        ->warn("LFS object {} linked to repo {} is missing from the blob store", obj.oid,
               repo.record.id);
    r.error = ObjectError(404, "Object does not exist");
    return r;
  }
  if (*stored != size) {  // git-lfs.md §11.4: the size must match the object's
    r.error = ObjectError(422, "Object " + obj.oid + " has size " + std::to_string(*stored) +
                                   ", not " + std::to_string(size));
    return r;
  }
  claims.op = TicketOp::Download;
  claims.size = *stored;
  r.ticket = IssueTicket(key_, claims);
  if (options_.download_redirect) {
    HANGAR_ASSIGN_OR_RETURN(auto url, blobs_.RedirectUrl(*oid, options_.ticket_ttl));
    if (!url.empty()) r.download_url = std::move(url);
  }
  return r;
}

Result<TicketClaims> LfsService::CheckTicket(std::string_view ticket, TicketOp op) const {
  auto claims = VerifyTicket(key_, ticket, Now());
  if (!claims) {
    // 403, not 401: the credential is in the URL, and a 401 would make git-lfs retry with
    // the user's password and then tell the credential helper to forget it. S3 answers an
    // expired presigned URL the same way.
    return MakeError(ErrorCode::Forbidden, std::move(claims).error().message);
  }
  if (claims->op != op) {
    return MakeError(ErrorCode::Forbidden,
                     std::string("this link is not valid for ") + std::string(TicketOpName(op)));
  }
  return claims;
}

Result<TicketClaims> LfsService::CheckTicket(std::string_view ticket, const Sha256& oid,
                                             TicketOp op) const {
  auto claims = CheckTicket(ticket, op);
  if (!claims) return claims;
  if (claims->oid != oid) {
    return MakeError(ErrorCode::Forbidden, std::string("this link is not valid for ") +
                                               std::string(TicketOpName(op)) + " of " + oid.Hex());
  }
  return claims;
}

Result<void> LfsService::Upload(std::string_view ticket, const Sha256& oid, ByteSource& body,
                                std::optional<uint64_t> content_length) {
  HANGAR_ASSIGN_OR_RETURN(auto claims, CheckTicket(ticket, oid, TicketOp::Upload));
  if (content_length && *content_length != claims.size) {
    return MakeError(ErrorCode::SizeInvalid, "Content-Length " + std::to_string(*content_length) +
                                                 " differs from the object's size " +
                                                 std::to_string(claims.size));
  }
  HANGAR_ASSIGN_OR_RETURN(auto writer, blobs_.Create(oid, claims.size));
  std::vector<char> buf(kUploadChunk);
  for (;;) {
    auto n = body.Read(buf);
    if (!n) {
      writer->Abort();
      return std::move(n).error();
    }
    if (*n == 0) break;
    auto appended = writer->Append(std::span<const char>(buf.data(), *n));
    if (!appended) return appended;  // the writer aborted itself
  }
  // Always verified, even when the store already has the blob: the bytes prove the client
  // has the object, which is what entitles this repo to link it.
  HANGAR_TRY(writer->Commit());
  return links_.Link(claims.repo_id, oid, claims.size);
}

Result<void> LfsService::CheckLinked(int64_t repo_id, const Sha256& oid, int64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto linked, links_.IsLinked(repo_id, oid));
  if (!linked.has_value()) {
    return MakeError(ErrorCode::NotFound, "Object " + oid.Hex() + " does not exist");
  }
  if (size < 0 || *linked != static_cast<uint64_t>(size)) {
    return MakeError(ErrorCode::Unprocessable, "Object " + oid.Hex() + " has size " +
                                                   std::to_string(*linked) + ", not " +
                                                   std::to_string(size));
  }
  return {};
}

Result<void> LfsService::Verify(const Principal& who, const RepoId& repo, const Sha256& oid,
                                int64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto handle, OpenRepo(who, repo, Access::Read));
  return CheckLinked(handle.record.id, oid, size);
}

Result<void> LfsService::VerifyWithTicket(std::string_view ticket, const Sha256& oid,
                                          int64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto claims, CheckTicket(ticket, oid, TicketOp::Upload));
  return CheckLinked(claims.repo_id, oid, size);
}

Result<LfsDownload> LfsService::Download(std::string_view ticket, const Sha256& oid,
                                         const LfsRangeChooser& choose) {
  HANGAR_ASSIGN_OR_RETURN(auto claims, CheckTicket(ticket, oid, TicketOp::Download));
  // The link was good when made; the repo or its holder's access may have changed since.
  if (auto holder = repos_.CheckLinkHolder(claims.repo_id, claims.user_id); !holder) {
    // 403 as for any link that no longer holds (see CheckTicket): a 401 would make git-lfs
    // retry with the user's password.
    if (holder.error().code == ErrorCode::GatedRepo) {
      return MakeError(ErrorCode::Forbidden,
                       "this link no longer grants access: " + holder.error().message);
    }
    return std::move(holder).error();
  }
  HANGAR_ASSIGN_OR_RETURN(auto linked, links_.IsLinked(claims.repo_id, oid));
  if (!linked.has_value() && missing_ != nullptr && missing_->Fills(claims.repo_id)) {
    // A pull-through cache's object: brought from its upstream (verified, then linked).
    HANGAR_TRY(missing_->Fill(claims.repo_id, oid, claims.size));
    HANGAR_ASSIGN_OR_RETURN(linked, links_.IsLinked(claims.repo_id, oid));
  }
  if (!linked.has_value()) {
    return MakeError(ErrorCode::NotFound, "Object " + oid.Hex() + " does not exist");
  }
  auto size = blobs_.Stat(oid);
  if (!size) {
    if (size.error().code == ErrorCode::BlobUnknown) {
      return MakeError(ErrorCode::NotFound, "Object " + oid.Hex() + " does not exist");
    }
    return std::move(size).error();
  }
  storage::ByteRange range;
  if (choose) {
    HANGAR_ASSIGN_OR_RETURN(auto chosen, choose(*size));
    range = chosen;
  }
  HANGAR_ASSIGN_OR_RETURN(auto window, storage::ResolveRange(range, *size));
  auto body = blobs_.Open(oid, storage::ByteRange::Window(window.offset, window.length));
  if (!body) {
    if (body.error().code == ErrorCode::BlobUnknown) {
      return MakeError(ErrorCode::NotFound, "Object " + oid.Hex() + " does not exist");
    }
    return std::move(body).error();
  }
  return LfsDownload{std::move(*body), *size, window.offset, window.length};
}

Result<std::optional<uint64_t>> LfsService::LinkedSize(int64_t repo_id, const Sha256& oid) {
  return links_.IsLinked(repo_id, oid);
}

}  // namespace hangar::services

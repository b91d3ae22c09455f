#include "api/lfs/lfs_routes.h"

#include <string>

#include "api/error_render.h"
#include "api/lfs/lfs_handlers.h"
#include "core/util.h"

namespace hangar::api {

namespace {

using services::TicketOp;

// Keeps `ticket` (a bearer credential for an hour) out of the access log.
void HideTicket(http::Request& req, std::string_view ticket) {
  if (ticket.empty()) return;
  req.log_target = req.target;
  if (size_t at = req.log_target.find(ticket); at != std::string::npos) {
    req.log_target.replace(at, ticket.size(), "<ticket>");
  }
}

// The transfer routes' own check, from the head: the path's ticket grants `op` on the
// path's oid (LfsService::CheckTicket; the handler checks it again with the claims).
http::Requirement TicketFor(services::LfsService& lfs, TicketOp op) {
  return http::Requirement::Ticket([&lfs, op](http::Request& req) -> std::optional<http::Response> {
    HideTicket(req, req.Param("ticket"));
    auto oid = lfs::OidParam(req);
    if (!oid) return RenderError(http::ApiFamily::Lfs, oid.error(), req);
    auto claims = lfs.CheckTicket(req.Param("ticket"), *oid, op);
    if (!claims) return RenderError(http::ApiFamily::Lfs, claims.error(), req);
    // The tickets of one repo share its writers' limit on large bodies in flight.
    req.quota_key = "repo #" + std::to_string(claims->repo_id);
    return std::nullopt;
  });
}

// A multipart part PUT's own check, from the head: the ticket, its staged upload, the part
// number and the Content-Length (LfsService::CheckPart), before a body byte is read.
http::Requirement PartOfStagedUpload(services::LfsService& lfs) {
  return http::Requirement::Ticket([&lfs](http::Request& req) -> std::optional<http::Response> {
    HideTicket(req, req.Param("ticket"));
    auto oid = lfs::OidParam(req);
    if (!oid) return RenderError(http::ApiFamily::Lfs, oid.error(), req);
    auto part = ParseUint64(req.Param("part"));
    if (!part) {
      return RenderError(http::ApiFamily::Lfs,
                         MakeError(ErrorCode::NotFound, "no such part URL: " + req.path), req);
    }
    // A body without framing is 0 bytes, which no part has: refused here, not after the
    // stored copy of the part was dropped.
    auto claims = lfs.CheckPart(req.Param("ticket"), *oid, std::string(req.Param("upload")), *part,
                                req.DeclaredBodyLength());
    if (!claims) return RenderError(http::ApiFamily::Lfs, claims.error(), req);
    req.quota_key = "repo #" + std::to_string(claims->repo_id);
    return std::nullopt;
  });
}

// The verify route's check when its href carries ?ticket= (the oid is in the body): an
// upload ticket.
http::OwnCheck UploadTicketInQuery(services::LfsService& lfs) {
  return [&lfs](http::Request& req) -> std::optional<http::Response> {
    const std::string ticket = req.Query("ticket").value_or("");
    HideTicket(req, ticket);
    auto claims = lfs.CheckTicket(ticket, TicketOp::Upload);
    if (!claims) return RenderError(http::ApiFamily::Lfs, claims.error(), req);
    return std::nullopt;
  };
}

}  // namespace

void AddLfsRoutes(http::Router& router, services::LfsService& lfs,
                  const config::LimitsConfig& limits) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  const int64_t max_body = limits.max_json_body_bytes;

  // Transfer hrefs first: they carry their own credential (a ticket) and no repo.
  router.Add(Method::Put, "/lfs-objects/upload/{ticket}/{oid}", ApiFamily::Lfs,
             TicketFor(lfs, TicketOp::Upload),
             [&lfs](http::Request& req) { return lfs::HandleUpload(lfs, req); });
  router.Add(Method::Get, "/lfs-objects/download/{ticket}/{oid}", ApiFamily::Lfs,
             TicketFor(lfs, TicketOp::Download),
             [&lfs](http::Request& req) { return lfs::HandleDownload(lfs, req); });
  router.Add(Method::Put, "/lfs-multipart/{ticket}/{oid}/{upload}/part/{part}", ApiFamily::Lfs,
             PartOfStagedUpload(lfs),
             [&lfs](http::Request& req) { return lfs::HandlePartUpload(lfs, req); });
  router.Add(Method::Post, "/lfs-multipart/{ticket}/{oid}/{upload}/complete", ApiFamily::Lfs,
             TicketFor(lfs, TicketOp::Upload), [&lfs, max_body](http::Request& req) {
               return lfs::HandleMultipartComplete(lfs, req, max_body);
             });

  for (RepoType type : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    // Read is the least any batch needs; an upload batch's Write is checked by LfsService,
    // since the operation is in the body.
    const Requirement read = Requirement::RepoChallenge(type, Access::Read, true);
    std::string base = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/info/lfs";
    router.Add(Method::Post, base + "/objects/batch", ApiFamily::Lfs, read,
               [&lfs, type, max_body](http::Request& req) {
                 return lfs::HandleBatch(lfs, req, type, max_body);
               });
    // A verify href carries the upload's ticket (?ticket=), which stands in for the repo
    // check: the hub clients send it without credentials (hf-api.md §7.3).
    router.Add(Method::Post, base + "/objects/verify", ApiFamily::Lfs,
               Requirement::RepoOrTicket(type, Access::Write, UploadTicketInQuery(lfs)),
               [&lfs, type, max_body](http::Request& req) {
                 return lfs::HandleVerify(lfs, req, type, max_body);
               });
    for (Method m : {Method::Get, Method::Post}) {
      router.Add(m, base + "/locks/{rest*}", ApiFamily::Lfs, read,
                 [](http::Request& req) { return lfs::HandleLocks(req); });
    }
  }
}

}  // namespace hangar::api

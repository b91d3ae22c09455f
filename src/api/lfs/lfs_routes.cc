#include "api/lfs/lfs_routes.h"

#include <string>

#include "api/lfs/lfs_handlers.h"

namespace hangar::api {

void AddLfsRoutes(http::Router& router, services::LfsService& lfs,
                  const config::LimitsConfig& limits) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  const int64_t max_body = limits.max_json_body_bytes;

  // Transfer hrefs first: they carry their own credential (a ticket) and no repo.
  router.Add(Method::Put, "/lfs-objects/upload/{ticket}/{oid}", ApiFamily::Lfs,
             Requirement::Ticket(),
             [&lfs](http::Request& req) { return lfs::HandleUpload(lfs, req); });
  router.Add(Method::Get, "/lfs-objects/download/{ticket}/{oid}", ApiFamily::Lfs,
             Requirement::Ticket(),
             [&lfs](http::Request& req) { return lfs::HandleDownload(lfs, req); });
  router.Add(Method::Put, "/lfs-multipart/{ticket}/{oid}/part/{part}", ApiFamily::Lfs,
             Requirement::Ticket(),
             [&lfs](http::Request& req) { return lfs::HandlePartUpload(lfs, req); });
  router.Add(Method::Post, "/lfs-multipart/{ticket}/{oid}/complete", ApiFamily::Lfs,
             Requirement::Ticket(), [&lfs, max_body](http::Request& req) {
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
               Requirement::RepoOrTicket(type, Access::Write),
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

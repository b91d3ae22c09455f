#include "api/lfs/lfs_routes.h"

#include <string>

#include "api/lfs/lfs_handlers.h"

namespace hangar::api {

void AddLfsRoutes(http::Router& router, services::LfsService& lfs,
                  const config::LimitsConfig& limits) {
  using http::ApiFamily;
  using http::Method;
  const int64_t max_body = limits.max_json_body_bytes;

  // Transfer hrefs first: they carry their own credential (a ticket) and no repo.
  router.Add(Method::Put, "/lfs-objects/upload/{ticket}/{oid}", ApiFamily::Lfs,
             [&lfs](http::Request& req) { return lfs::HandleUpload(lfs, req); },
             /*authenticate=*/false);
  router.Add(Method::Get, "/lfs-objects/download/{ticket}/{oid}", ApiFamily::Lfs,
             [&lfs](http::Request& req) { return lfs::HandleDownload(lfs, req); },
             /*authenticate=*/false);
  router.Add(Method::Put, "/lfs-multipart/{ticket}/{oid}/part/{part}", ApiFamily::Lfs,
             [&lfs](http::Request& req) { return lfs::HandlePartUpload(lfs, req); },
             /*authenticate=*/false);
  router.Add(Method::Post, "/lfs-multipart/{ticket}/{oid}/complete", ApiFamily::Lfs,
             [&lfs, max_body](http::Request& req) {
               return lfs::HandleMultipartComplete(lfs, req, max_body);
             },
             /*authenticate=*/false);

  for (RepoType type : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    std::string base = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/info/lfs";
    router.Add(Method::Post, base + "/objects/batch", ApiFamily::Lfs,
               [&lfs, type, max_body](http::Request& req) {
                 return lfs::HandleBatch(lfs, req, type, max_body);
               });
    router.Add(Method::Post, base + "/objects/verify", ApiFamily::Lfs,
               [&lfs, type, max_body](http::Request& req) {
                 return lfs::HandleVerify(lfs, req, type, max_body);
               });
    for (Method m : {Method::Get, Method::Post}) {
      router.Add(m, base + "/locks/{rest*}", ApiFamily::Lfs,
                 [](http::Request& req) { return lfs::HandleLocks(req); });
    }
  }
}

}  // namespace hangar::api

#pragma once
// Routes of the native upload API (docs/uploads.md), in ApiFamily::Hf:
//   POST    /api/{models,datasets,spaces}/{ns}/{name}/uploads   create or resume
//   GET     /api/uploads/{id}                                    the upload and its parts
//   PUT     /api/uploads/{id}/parts/{n}                          store part n
//   POST    /api/uploads/{id}/complete                           join, verify, link
//   DELETE  /api/uploads/{id}                                    abort
// All need a bearer token; uploads belong to their creator.

#include "config/config.h"
#include "http/router.h"
#include "services/uploads/upload_service.h"

namespace hangar::api {

// `uploads` must outlive the router. `limits.max_json_body_bytes` caps the create body.
void AddUploadRoutes(http::Router& router, services::UploadService& uploads,
                     const config::LimitsConfig& limits);

}  // namespace hangar::api

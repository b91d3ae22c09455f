#pragma once
// RenderError: the one place a catalog Error becomes a protocol's error shape
// (STYLE.md §3; hf-api.md §1.10, git-lfs.md §6/§11, oci.md §errors).

#include "core/error.h"
#include "http/request.h"
#include "http/response.h"
#include "http/router.h"

namespace hangar::api {

// Renders `e` for `req` in family `api`: status from the catalog; HF adds X-Error-Code /
// X-Error-Message and {"error": msg}; LFS {"message", "request_id"} with its media type;
// Git a plain-text body; Unauthorized adds the Basic challenge git and git-lfs need.
http::Response RenderError(http::ApiFamily api, const Error& e, const http::Request& req);

}  // namespace hangar::api

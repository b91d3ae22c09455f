#pragma once
// The OCI registry routes (oci.md §1.5): /v2/token (api/oci/token_handler.cc), /v2/ and
// one /v2/{rest*} route per method, dispatched on the path's suffix.

#include "api/oci/oci_auth.h"
#include "http/router.h"
#include "services/oci/oci_service.h"

namespace hangar::api {

// Registers the token endpoint, then the registry. `registry` and `auth` must outlive the
// router. Register before any /{ns}/{name}/... pattern (a user may be called "v2").
void AddOciRoutes(http::Router& router, services::OciService& registry, const OciAuth& auth);

}  // namespace hangar::api

#include "api/oci/oci_auth.h"

namespace hangar::api {

// Placeholder until the token flow lands: no token endpoint.
void AddOciTokenRoute(http::Router&, const OciAuth&, services::OciService&) {}

}  // namespace hangar::api

#pragma once
// Routes of the dataset viewer API (dataset-viewer.md, docs/viewer.md; issue 15), in
// ApiFamily::Viewer, on the hub's host and on a `datasets-server.<hub host>` name alike
// (the `datasets` library derives that host from HF_ENDPOINT):
//   GET /is-valid /splits /first-rows /rows /parquet /info /size   ?dataset=&config=&split=…
// and the hub's own routes of the export, in ApiFamily::Hf:
//   GET /api/datasets/{ns}/{name}/parquet                           {config: {split: [url]}}
//   GET /api/datasets/{ns}/{name}/parquet/{config}/{split}          [url]
//   GET /api/datasets/{ns}/{name}/parquet/{config}/{split}/{n}.parquet   302 to the shard
// The viewer routes are public: the service checks read access on the dataset itself and
// answers 401/404 in the viewer's words (§1). Their top-level names are reserved as user
// and org names (services/auth).

#include "http/router.h"
#include "services/viewer/viewer_service.h"

namespace hangar::api {

// `viewer` must outlive the router.
void AddViewerRoutes(http::Router& router, services::viewer::ViewerService& viewer);

}  // namespace hangar::api

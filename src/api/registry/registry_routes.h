#pragma once
// Routes of the model registry (issue 16, docs/registry.md), Hangar's own JSON face, in
// ApiFamily::Hf:
//   GET  /health                                         {"status": "ok"}
//   GET  /api/v1/models ?limit&offset&owner&search&tag&sort   {models, next_offset}
//   POST /api/v1/models                                   register: the model (created on
//                                                         first use) and, with `repo`, a version
//   GET  /api/v1/models/{name}                            the model with its newest versions
//   POST /api/v1/models/{name}/versions                   register a version
//   GET  /api/v1/models/{name}/versions ?limit&offset     newest first
//   GET  /api/v1/models/{name}/versions/{version}
//   PUT|DELETE /api/v1/models/{name}/aliases/{alias}      move (body {"version": n}) / delete
//   GET  /api/v1/models/{name}/aliases/log ?before&limit  the audit log, newest first
//   PUT|DELETE /api/v1/models/{name}/roles/{user}         give (body {"role": "deployer"}) / take
// and MLflow's Model Registry REST API under /api/2.0/mlflow/ (mlflow_routes.cc), in
// ApiFamily::Mlflow. Reads are public (the service hides private models); writes need a
// write token, checked from the headers before the body is read.

#include "http/router.h"
#include "services/registry/registry_service.h"

namespace hangar::api {

// `registry` must outlive the router.
void AddRegistryRoutes(http::Router& router, services::RegistryService& registry);

namespace registry {
// The MLflow routes (mlflow_routes.cc); AddRegistryRoutes adds them.
void AddMlflowRoutes(http::Router& router, services::RegistryService& registry);
}  // namespace registry

}  // namespace hangar::api

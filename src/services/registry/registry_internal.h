#pragma once
// What registry_service.cc and registry_versions.cc share: the model the caller asked
// for with their access to its namespace, and the checks of names and tags.

#include <map>
#include <string>

#include "core/result.h"
#include "services/registry/registry_service.h"

namespace hangar::services {

struct RegistryService::Seen {
  db::ModelRecord model;
  Access access = Access::None;  // the caller's, on the owner namespace
};

namespace registry {

// A model name: [A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters. Errors: BadRequest.
Result<void> CheckModelName(const std::string& name);
// An alias: [A-Za-z_][A-Za-z0-9_-]*, at most 256 characters, neither "latest" nor
// v<digits> (MLflow's reserved forms). Errors: BadRequest.
Result<void> CheckAlias(const std::string& alias);
// A tag key (1…250 bytes, no control characters) and value (at most 5,000 bytes).
// Errors: BadRequest.
Result<void> CheckTag(const std::string& key, const std::string* value);
Result<void> CheckTags(const std::map<std::string, std::string>& tags);
// A description: at most 65,536 bytes. Errors: BadRequest.
Result<void> CheckDescription(const std::string& text);

}  // namespace registry
}  // namespace hangar::services

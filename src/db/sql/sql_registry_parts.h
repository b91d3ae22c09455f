#pragma once
// The parts of registry records a listing reads for a whole page at once (the tags and
// aliases of models, the tags and datasets of versions), for SqlRegistryStore.

#include <vector>

#include "db/registry_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

// Fills the tags and aliases of every model of `models` with two queries.
Result<void> ReadModelsParts(Connection& c, std::vector<ModelRecord>& models);
// Fills the tags and datasets of every version of `versions` with two queries.
Result<void> ReadVersionsParts(Connection& c, std::vector<VersionRecord>& versions);

}  // namespace hangar::db

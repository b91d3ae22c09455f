#include "db/sqlite/sqlite_stores.h"

#include "db/sqlite/sqlite_gateway_store.h"
#include "db/sqlite/sqlite_lfs_store.h"
#include "db/sqlite/sqlite_oci_store.h"
#include "db/sqlite/sqlite_registry_store.h"
#include "db/sqlite/sqlite_repo_store.h"
#include "db/sqlite/sqlite_upload_store.h"
#include "db/sqlite/sqlite_user_store.h"
#include "db/sqlite/sqlite_viewer_store.h"

namespace hangar::db {

Result<Stores> OpenSqliteStores(const std::filesystem::path& db_file, SqlitePool::Options options) {
  HANGAR_ASSIGN_OR_RETURN(auto pool, SqlitePool::Open(db_file, options));
  Stores stores;
  stores.users = std::make_unique<SqliteUserStore>(pool);
  stores.repos = std::make_unique<SqliteRepoStore>(pool);
  stores.lfs = std::make_unique<SqliteLfsStore>(pool);
  stores.uploads = std::make_unique<SqliteUploadStore>(pool);
  stores.oci = std::make_unique<SqliteOciStore>(pool);
  stores.viewer = std::make_unique<SqliteViewerStore>(pool);
  stores.registry = std::make_unique<SqliteRegistryStore>(pool);
  stores.gateway = std::make_unique<SqliteGatewayStore>(pool);
  return stores;
}

}  // namespace hangar::db

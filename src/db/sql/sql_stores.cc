#include "db/sql/sql_stores.h"

#include "db/postgres/pg_change_feed.h"
#include "db/postgres/pg_conn.h"
#include "db/sql/sql_collection_store.h"
#include "db/sql/sql_discussion_store.h"
#include "db/sql/sql_gate_store.h"
#include "db/sql/sql_gateway_store.h"
#include "db/sql/sql_job_store.h"
#include "db/sql/sql_lfs_store.h"
#include "db/sql/sql_like_store.h"
#include "db/sql/sql_mirror_store.h"
#include "db/sql/sql_oci_store.h"
#include "db/sql/sql_registry_store.h"
#include "db/sql/sql_repo_store.h"
#include "db/sql/sql_ssh_key_store.h"
#include "db/sql/sql_upload_store.h"
#include "db/sql/sql_user_store.h"
#include "db/sql/sql_viewer_store.h"
#include "db/sql/sql_webhook_store.h"
#include "db/sqlite/sqlite_conn.h"

namespace hangar::db {

Stores StoresOver(std::shared_ptr<Pool> pool) {
  Stores stores;
  stores.users = std::make_unique<SqlUserStore>(pool);
  stores.repos = std::make_unique<SqlRepoStore>(pool);
  stores.lfs = std::make_unique<SqlLfsStore>(pool);
  stores.uploads = std::make_unique<SqlUploadStore>(pool);
  stores.oci = std::make_unique<SqlOciStore>(pool);
  stores.viewer = std::make_unique<SqlViewerStore>(pool);
  stores.registry = std::make_unique<SqlRegistryStore>(pool);
  stores.gateway = std::make_unique<SqlGatewayStore>(pool);
  stores.jobs = std::make_unique<SqlJobStore>(pool);
  stores.ssh_keys = std::make_unique<SqlSshKeyStore>(pool);
  stores.mirrors = std::make_unique<SqlMirrorStore>(pool);
  stores.gates = std::make_unique<SqlGateStore>(pool);
  stores.likes = std::make_unique<SqlLikeStore>(pool);
  stores.discussions = std::make_unique<SqlDiscussionStore>(pool);
  stores.webhooks = std::make_unique<SqlWebhookStore>(pool);
  stores.collections = std::make_unique<SqlCollectionStore>(pool);
  stores.pool = std::move(pool);
  stores.changes = std::make_unique<ChangeFeed>();
  return stores;
}

Result<Stores> OpenSqliteStores(const std::filesystem::path& db_file, int max_connections) {
  HANGAR_ASSIGN_OR_RETURN(auto pool, OpenSqlitePool(db_file, {.max_connections = max_connections}));
  return StoresOver(std::move(pool));
}

Result<Stores> OpenPostgresStores(const std::string& url, int max_connections) {
  HANGAR_ASSIGN_OR_RETURN(auto pool, OpenPostgresPool(url, {.max_connections = max_connections}));
  HANGAR_ASSIGN_OR_RETURN(auto feed, PgChangeFeed::Open(url, pool));
  Stores stores = StoresOver(std::move(pool));
  stores.changes = std::move(feed);
  return stores;
}

Result<Stores> OpenStores(const std::string& url, const std::filesystem::path& sqlite_path,
                          int max_connections) {
  if (!url.empty()) return OpenPostgresStores(url, max_connections);
  return OpenSqliteStores(sqlite_path, max_connections);
}

}  // namespace hangar::db

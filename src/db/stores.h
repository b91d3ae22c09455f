#pragma once
// Stores: the metadata stores services use, opened together over one database.
// Open with OpenSqliteStores or OpenStores (db/sql/sql_stores.h).

#include <memory>

#include "db/change_feed.h"
#include "db/collection_store.h"
#include "db/discussion_store.h"
#include "db/gate_store.h"
#include "db/gateway_store.h"
#include "db/job_store.h"
#include "db/lfs_store.h"
#include "db/like_store.h"
#include "db/mirror_store.h"
#include "db/oci_store.h"
#include "db/registry_store.h"
#include "db/repo_store.h"
#include "db/ssh_key_store.h"
#include "db/upload_store.h"
#include "db/user_store.h"
#include "db/viewer_store.h"
#include "db/webhook_store.h"

namespace hangar::db {

class Pool;  // db/sql/sql.h

// Owns the stores; they share one connection pool and stay valid while this lives.
struct Stores {
  std::unique_ptr<UserStore> users;
  std::unique_ptr<RepoStore> repos;
  std::unique_ptr<LfsStore> lfs;
  std::unique_ptr<UploadStore> uploads;
  std::unique_ptr<OciStore> oci;
  std::unique_ptr<ViewerStore> viewer;
  std::unique_ptr<RegistryStore> registry;
  std::unique_ptr<GatewayStore> gateway;
  std::unique_ptr<JobStore> jobs;
  std::unique_ptr<SshKeyStore> ssh_keys;
  std::unique_ptr<MirrorStore> mirrors;
  std::unique_ptr<GateStore> gates;
  std::unique_ptr<LikeStore> likes;
  std::unique_ptr<DiscussionStore> discussions;
  std::unique_ptr<WebhookStore> webhooks;
  std::unique_ptr<CollectionStore> collections;
  std::shared_ptr<Pool> pool;  // the connections they share (readiness, metrics)
  // What this process changed, told to every process on the database (cache invalidation).
  // Declared last: it stops before the pool it publishes through.
  std::unique_ptr<ChangeFeed> changes;
};

}  // namespace hangar::db

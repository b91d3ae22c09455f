#include "db/migrations/migrations.h"

#include <string_view>

namespace hangar::db {
namespace {

// Version 1: users and orgs share one table so their names can never collide.
constexpr const char kV1[] = R"sql(
CREATE TABLE users (
  id {{ID}},
  name VARCHAR(96) NOT NULL UNIQUE,
  kind VARCHAR(8) NOT NULL,
  fullname TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  is_admin INTEGER NOT NULL DEFAULT 0,
  password_hash TEXT,
  created_at BIGINT NOT NULL
);
CREATE TABLE org_members (
  org_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role VARCHAR(8) NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members(user_id);
CREATE TABLE tokens (
  id {{ID}},
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  role VARCHAR(8) NOT NULL,
  token_sha256 CHAR(64) NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  expires_at BIGINT,
  revoked INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tokens_user ON tokens(user_id);
CREATE TABLE repos (
  id {{ID}},
  type VARCHAR(8) NOT NULL,
  namespace VARCHAR(96) NOT NULL,
  name VARCHAR(96) NOT NULL,
  private INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  last_modified BIGINT NOT NULL,
  last_commit VARCHAR(64) NOT NULL DEFAULT '',
  default_branch TEXT NOT NULL DEFAULT 'main',
  UNIQUE (type, namespace, name)
);
CREATE INDEX repos_type_modified ON repos(type, last_modified, id);
CREATE INDEX repos_type_created ON repos(type, created_at, id);
CREATE INDEX repos_namespace ON repos(namespace);
CREATE TABLE lfs_links (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL,
  PRIMARY KEY (repo_id, sha256)
);
CREATE INDEX lfs_links_sha256 ON lfs_links(sha256);
)sql";

// Version 2: multipart uploads in flight (docs/uploads.md). The id is also the blob
// store's staging key; rows of a deleted repo go with it (GC then removes the staging).
constexpr const char kV2[] = R"sql(
CREATE TABLE uploads (
  id CHAR(32) PRIMARY KEY,
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL,
  part_size BIGINT NOT NULL,
  store_handle TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  completed_at BIGINT
);
CREATE INDEX uploads_object ON uploads(repo_id, user_id, sha256);
CREATE INDEX uploads_expires ON uploads(expires_at);
)sql";

// Version 3: the web UI (issue #4). Browser sessions (the cookie's SHA-256 is stored,
// never the cookie), model-card metadata kept per repo for listings and filters, and
// daily download counts for "trending".
constexpr const char kV3[] = R"sql(
CREATE TABLE sessions (
  id_sha256 CHAR(64) PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf CHAR(64) NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);
ALTER TABLE repos ADD COLUMN library TEXT NOT NULL DEFAULT '';
ALTER TABLE repos ADD COLUMN pipeline TEXT NOT NULL DEFAULT '';
CREATE TABLE repo_tags (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  tag VARCHAR(200) NOT NULL,
  PRIMARY KEY (repo_id, tag)
);
CREATE INDEX repo_tags_tag ON repo_tags(tag, repo_id);
CREATE TABLE repo_downloads (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  day BIGINT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (repo_id, day)
);
)sql";

// Version 4: listings sorted by downloads. The all-time count lives on the repo row so
// that sort pages by keyset like the others; the day index keeps "trending" (the last 7
// days) from scanning older counts.
constexpr const char kV4[] = R"sql(
ALTER TABLE repos ADD COLUMN downloads BIGINT NOT NULL DEFAULT 0;
CREATE INDEX repos_downloads ON repos(downloads, id);
CREATE INDEX repo_downloads_day ON repo_downloads(day, repo_id);
)sql";

// Version 5: the OCI registry (oci.md; db/oci_store.h). Manifests keep their exact bytes;
// oci_refs lists what each manifest points at (GC, blob deletes); oci_blob_links are the
// OCI counterpart of lfs_links (GC keeps a blob while either table links it). Registry
// names are lower-case while hub names may not be: repos_folded finds a repo by its
// lower-cased namespace and name (RepoStore::FindFolded).
constexpr const char kV5[] = R"sql(
CREATE INDEX repos_folded ON repos(type, lower(namespace), lower(name));
CREATE TABLE oci_manifests (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  digest VARCHAR(200) NOT NULL,
  media_type TEXT NOT NULL,
  body {{BYTES}} NOT NULL,
  size BIGINT NOT NULL,
  subject VARCHAR(200) NOT NULL DEFAULT '',
  artifact_type TEXT NOT NULL DEFAULT '',
  annotations TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, digest)
);
CREATE INDEX oci_manifests_subject ON oci_manifests(repo_id, subject, digest);
CREATE TABLE oci_tags (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  tag VARCHAR(128) NOT NULL,
  digest VARCHAR(200) NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, tag)
);
CREATE INDEX oci_tags_digest ON oci_tags(repo_id, digest);
CREATE TABLE oci_refs (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  manifest VARCHAR(200) NOT NULL,
  ref VARCHAR(200) NOT NULL,
  is_manifest INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (repo_id, manifest, ref)
);
CREATE INDEX oci_refs_ref ON oci_refs(repo_id, ref);
CREATE TABLE oci_blob_links (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL,
  linked_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, sha256)
);
CREATE INDEX oci_blob_links_sha256 ON oci_blob_links(sha256);
CREATE TABLE oci_aliases (
  digest VARCHAR(200) PRIMARY KEY,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL
);
CREATE TABLE oci_git_blobs (
  git_oid CHAR(40) PRIMARY KEY,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL
);
CREATE INDEX oci_git_blobs_sha256 ON oci_git_blobs(sha256);
)sql";

// Version 6: the dataset viewer's Parquet export (dataset-viewer.md §8; db/viewer_store.h).
// One export row per repo; its splits and their files hang off it, so deleting the export
// (or the repo) takes them along. row_group_rows is the decimal row count of each row
// group, comma-separated in order ("" for none): read whole, never queried.
constexpr const char kV6[] = R"sql(
CREATE TABLE viewer_exports (
  repo_id BIGINT PRIMARY KEY REFERENCES repos(id) ON DELETE CASCADE,
  source_commit VARCHAR(64) NOT NULL,
  status VARCHAR(8) NOT NULL,
  export_commit VARCHAR(64) NOT NULL DEFAULT '',
  viewer INTEGER NOT NULL DEFAULT 1,
  error_code VARCHAR(64) NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  updated_at BIGINT NOT NULL
);
CREATE INDEX viewer_exports_status ON viewer_exports(status, repo_id);
CREATE TABLE viewer_splits (
  repo_id BIGINT NOT NULL REFERENCES viewer_exports(repo_id) ON DELETE CASCADE,
  config TEXT NOT NULL,
  split TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  status VARCHAR(8) NOT NULL,
  error_code VARCHAR(64) NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  builder VARCHAR(16) NOT NULL DEFAULT '',
  partial INTEGER NOT NULL DEFAULT 0,
  num_rows BIGINT NOT NULL DEFAULT 0,
  estimated_num_rows BIGINT,
  num_columns BIGINT NOT NULL DEFAULT 0,
  num_bytes_original BIGINT NOT NULL DEFAULT 0,
  num_bytes_parquet BIGINT NOT NULL DEFAULT 0,
  num_bytes_memory BIGINT NOT NULL DEFAULT 0,
  columns_json TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (repo_id, config, split)
);
CREATE TABLE viewer_files (
  repo_id BIGINT NOT NULL,
  config TEXT NOT NULL,
  split TEXT NOT NULL,
  shard INTEGER NOT NULL,
  path TEXT NOT NULL,
  sha256 CHAR(64) NOT NULL,
  size BIGINT NOT NULL,
  row_offset BIGINT NOT NULL,
  num_rows BIGINT NOT NULL,
  row_group_rows TEXT NOT NULL,
  PRIMARY KEY (repo_id, config, split, shard),
  FOREIGN KEY (repo_id, config, split) REFERENCES viewer_splits(repo_id, config, split)
    ON DELETE CASCADE
);
)sql";

// Version 7: the README's one language, which picks the viewer's search stemmer (§4.5).
constexpr const char kV7[] = R"sql(
ALTER TABLE viewer_exports ADD COLUMN language VARCHAR(32) NOT NULL DEFAULT '';
)sql";

// Version 8: the model registry (issue 16, docs/registry.md). Versions keep their repo's
// name and commit as text, so a version stays readable after its repo is deleted.
constexpr const char kV8[] = R"sql(
CREATE TABLE registered_models (
  id {{ID}},
  name VARCHAR(256) NOT NULL UNIQUE,
  owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  description TEXT NOT NULL DEFAULT '',
  private INTEGER NOT NULL DEFAULT 0,
  created_by BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  next_version BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX registered_models_owner ON registered_models(owner_id, name);
CREATE INDEX registered_models_updated ON registered_models(updated_at, name);
CREATE TABLE registered_model_tags (
  model_id BIGINT NOT NULL REFERENCES registered_models(id) ON DELETE CASCADE,
  key VARCHAR(250) NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (model_id, key)
);
CREATE TABLE model_versions (
  model_id BIGINT NOT NULL REFERENCES registered_models(id) ON DELETE CASCADE,
  version BIGINT NOT NULL,
  repo_id BIGINT REFERENCES repos(id) ON DELETE SET NULL,
  repo_type VARCHAR(8) NOT NULL,
  repo TEXT NOT NULL,
  commit_sha CHAR(40) NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status VARCHAR(24) NOT NULL,
  status_message TEXT NOT NULL DEFAULT '',
  run_id TEXT NOT NULL DEFAULT '',
  run_link TEXT NOT NULL DEFAULT '',
  base_model_id BIGINT NOT NULL DEFAULT 0,
  base_version BIGINT NOT NULL DEFAULT 0,
  archived INTEGER NOT NULL DEFAULT 0,
  created_by BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (model_id, version)
);
CREATE INDEX model_versions_repo ON model_versions(repo_id);
CREATE INDEX model_versions_run ON model_versions(run_id);
CREATE TABLE model_version_datasets (
  model_id BIGINT NOT NULL,
  version BIGINT NOT NULL,
  position INTEGER NOT NULL,
  repo_id BIGINT REFERENCES repos(id) ON DELETE SET NULL,
  repo TEXT NOT NULL,
  commit_sha CHAR(40) NOT NULL,
  PRIMARY KEY (model_id, version, position),
  FOREIGN KEY (model_id, version) REFERENCES model_versions(model_id, version) ON DELETE CASCADE
);
CREATE TABLE model_version_tags (
  model_id BIGINT NOT NULL,
  version BIGINT NOT NULL,
  key VARCHAR(250) NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (model_id, version, key),
  FOREIGN KEY (model_id, version) REFERENCES model_versions(model_id, version) ON DELETE CASCADE
);
CREATE TABLE model_aliases (
  model_id BIGINT NOT NULL,
  alias VARCHAR(256) NOT NULL,
  version BIGINT NOT NULL,
  PRIMARY KEY (model_id, alias),
  FOREIGN KEY (model_id, version) REFERENCES model_versions(model_id, version) ON DELETE CASCADE
);
CREATE TABLE model_alias_events (
  id {{ID}},
  model_id BIGINT NOT NULL REFERENCES registered_models(id) ON DELETE CASCADE,
  alias VARCHAR(256) NOT NULL,
  from_version BIGINT NOT NULL,
  to_version BIGINT NOT NULL,
  actor_id BIGINT NOT NULL,
  actor TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX model_alias_events_model ON model_alias_events(model_id, id);
CREATE TABLE model_roles (
  model_id BIGINT NOT NULL REFERENCES registered_models(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role VARCHAR(16) NOT NULL,
  PRIMARY KEY (model_id, user_id)
);
)sql";

// Version 9: the gateway's routes and their backends (issue 16, docs/gateway.md).
constexpr const char kV9[] = R"sql(
CREATE TABLE gateway_routes (
  id {{ID}},
  name VARCHAR(128) NOT NULL UNIQUE,
  model_id BIGINT NOT NULL REFERENCES registered_models(id) ON DELETE CASCADE,
  target_alias VARCHAR(256) NOT NULL DEFAULT '',
  target_version BIGINT NOT NULL DEFAULT 0,
  protocol VARCHAR(8) NOT NULL,
  fallback VARCHAR(128) NOT NULL DEFAULT '',
  timeout_ms BIGINT NOT NULL,
  retries BIGINT NOT NULL,
  requests_per_minute BIGINT NOT NULL DEFAULT 0,
  tokens_per_minute BIGINT NOT NULL DEFAULT 0,
  created_by BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX gateway_routes_model ON gateway_routes(model_id);
CREATE TABLE gateway_backends (
  route_id BIGINT NOT NULL REFERENCES gateway_routes(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  kind VARCHAR(8) NOT NULL,
  target TEXT NOT NULL,
  weight INTEGER NOT NULL,
  PRIMARY KEY (route_id, position)
);
)sql";

// Version 10: a card's tags keep their order in a column of their own (SQLite kept it in
// rowid, which PostgreSQL has no equivalent of); SQLite's existing rows keep theirs.
constexpr const char kV10[] = R"sql(
ALTER TABLE repo_tags ADD COLUMN position BIGINT NOT NULL DEFAULT 0;
UPDATE repo_tags SET position = {{ROW_ORDER}};
)sql";

// Version 11: the durable job queue (db/job_store.h, issue 17 §3) and the ticks of periodic
// jobs. At most one queued job per kind and non-empty key (jobs_queued_key); claims scan
// jobs_due.
constexpr const char kV11[] = R"sql(
CREATE TABLE jobs (
  id {{ID}},
  kind TEXT NOT NULL,
  dedup_key TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  run_at BIGINT NOT NULL,
  claim TEXT NOT NULL,
  lease_until BIGINT NOT NULL,
  last_error TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE UNIQUE INDEX jobs_queued_key ON jobs (kind, dedup_key)
  WHERE state = 'queued' AND dedup_key <> '';
CREATE TABLE job_ticks (
  name TEXT PRIMARY KEY,
  due_at BIGINT NOT NULL
);
)sql";

// Version 12: the trending score is a column (db::RepoStore::RefreshTrending keeps it; a
// download adds to it at once) so that a trending listing reads an index instead of summing
// every repo's window of repo_downloads per request; filled by the first refresh. Every
// listing order gets an index with the type first (the /models, /datasets listings) and
// one without it (the home page and /api/repos-style listings of every type), so a page
// never sorts the whole table (issue 17: 1,000,000 repos).
constexpr const char kV12[] = R"sql(
ALTER TABLE repos ADD COLUMN trending BIGINT NOT NULL DEFAULT 0;
CREATE INDEX repos_type_trending ON repos(type, trending, id);
CREATE INDEX repos_trending ON repos(trending, id);
CREATE INDEX repos_type_downloads ON repos(type, downloads, id);
CREATE INDEX repos_modified ON repos(last_modified, id);
CREATE INDEX repos_created ON repos(created_at, id);
)sql";

// Version 13: an index for listings' search filter (a substring of "namespace/name",
// db::RepoQuery::search), so a search need not read every repo. SQLite: an FTS5 table with
// the trigram tokenizer, kept by triggers; db::SqlRepoStore::List joins it when a search
// matches few repos. PostgreSQL: pg_trgm's GIN index on the very expression List filters
// by, which its planner uses when it pays (the role needs the right to create pg_trgm, a
// trusted extension: a database owner has it; docs/deploy.md).
constexpr const char kV13Sqlite[] = R"sql(
CREATE VIRTUAL TABLE repos_search USING fts5(path, tokenize = 'trigram');
INSERT INTO repos_search (rowid, path) SELECT id, lower(namespace || '/' || name) FROM repos;
CREATE TRIGGER repos_search_insert AFTER INSERT ON repos BEGIN
  INSERT INTO repos_search (rowid, path) VALUES (new.id, lower(new.namespace || '/' || new.name));
END;
CREATE TRIGGER repos_search_delete AFTER DELETE ON repos BEGIN
  DELETE FROM repos_search WHERE rowid = old.id;
END;
CREATE TRIGGER repos_search_rename AFTER UPDATE OF namespace, name ON repos BEGIN
  UPDATE repos_search SET path = lower(new.namespace || '/' || new.name) WHERE rowid = new.id;
END;
)sql";
constexpr const char kV13Postgres[] = R"sql(
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX repos_search ON repos USING gin (lower(namespace || '/' || name) gin_trgm_ops);
)sql";

// Version 14: SSH public keys (issue 18 §1; db/ssh_key_store.h): a user's own keys and
// repos' deploy keys in one table, so that one key (one fingerprint) is never both. Each row
// belongs to exactly one user or one repo and goes with it: deleting a repo deletes its row
// (RepoStore::Delete), and with it its deploy keys. sshd's AuthorizedKeysCommand looks a
// key up by type and blob (ssh_keys_blob); the blob is at most ~1.4 KiB of base64 (8192-bit
// RSA), within PostgreSQL's bound on a B-tree entry.
constexpr const char kV14[] = R"sql(
CREATE TABLE ssh_keys (
  id {{ID}},
  user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
  repo_id BIGINT REFERENCES repos(id) ON DELETE CASCADE,
  read_write INTEGER NOT NULL DEFAULT 0,
  title TEXT NOT NULL,
  key_type VARCHAR(64) NOT NULL,
  blob_base64 TEXT NOT NULL,
  fingerprint VARCHAR(64) NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  CHECK ((user_id IS NULL) <> (repo_id IS NULL))
);
CREATE INDEX ssh_keys_user ON ssh_keys(user_id);
CREATE INDEX ssh_keys_repo ON ssh_keys(repo_id);
CREATE INDEX ssh_keys_blob ON ssh_keys(key_type, blob_base64);
)sql";

// Version 15: mirrors (issue 18 §4; db/mirror_store.h). A pull mirror's repo is marked
// (repos.is_mirror) so that RepoService::Open refuses writes to it from the one row it
// already reads; a repo has at most one pull mirror (mirrors_one_pull) and any number of
// push mirrors. The schedule finds due pull mirrors by next_sync_at (mirrors_due).
constexpr const char kV15[] = R"sql(
ALTER TABLE repos ADD COLUMN is_mirror INTEGER NOT NULL DEFAULT 0;
CREATE TABLE mirrors (
  id {{ID}},
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  direction VARCHAR(8) NOT NULL,
  url TEXT NOT NULL,
  credential TEXT NOT NULL DEFAULT '',
  interval_s BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  last_sync_at BIGINT,
  last_success_at BIGINT,
  last_error TEXT NOT NULL DEFAULT '',
  failures INTEGER NOT NULL DEFAULT 0,
  next_sync_at BIGINT NOT NULL DEFAULT 0,
  CHECK (direction IN ('pull', 'push'))
);
CREATE UNIQUE INDEX mirrors_one_pull ON mirrors(repo_id) WHERE direction = 'pull';
CREATE INDEX mirrors_repo ON mirrors(repo_id);
CREATE INDEX mirrors_due ON mirrors(next_sync_at) WHERE direction = 'pull';
)sql";

// Version 16: pull-through caches (issue 18 §5, docs/upstream.md). A cache's repo is a
// pull mirror whose LFS objects are linked when its refs are fetched but fetched from the
// upstream only when first read (lazy_lfs); the schedule leaves such mirrors alone (they
// are revalidated when read), so mirrors_due skips them.
constexpr const char kV16[] = R"sql(
ALTER TABLE mirrors ADD COLUMN lazy_lfs INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 17: upstream tokens (issue 18 §5, docs/upstream.md). A user's own token for an
// upstream hub lets the cache bring and serve that user the upstream's private and gated
// repos; such a cached repo is `restricted`: every reader needs the upstream's own yes
// (UpstreamCache::Read), and its mirror fetches with the token of a user who had one.
constexpr const char kV17[] = R"sql(
ALTER TABLE mirrors ADD COLUMN restricted INTEGER NOT NULL DEFAULT 0;
CREATE TABLE upstream_tokens (
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  upstream TEXT NOT NULL,
  token TEXT NOT NULL,
  upstream_user TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, upstream)
);
)sql";

// Version 18: gated repos (issue 19 §1, docs/gating.md). A repo's gate ('' off, 'auto',
// 'manual'), and each user's access request per repo, one row per (repo, user): its status
// ('pending', 'accepted', 'rejected'), the form's fields as a JSON object, the reason of a
// rejection, and whether the repo's admins granted it without a request. Listed per repo
// and status, oldest first (access_requests_list).
constexpr const char kV18[] = R"sql(
ALTER TABLE repos ADD COLUMN gated VARCHAR(8) NOT NULL DEFAULT '';
CREATE TABLE access_requests (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  status VARCHAR(8) NOT NULL,
  fields TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  granted INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, user_id),
  CHECK (status IN ('pending', 'accepted', 'rejected'))
);
CREATE INDEX access_requests_list ON access_requests(repo_id, status, created_at);
)sql";

// Version 19: likes (issue 19 §3, docs/social.md). One row per (repo, user) who liked it,
// listed newest first per repo (repo_likes_repo) and per user (repo_likes_user); the
// repo's count kept beside its row for info, listings and sort=likes.
constexpr const char kV19[] = R"sql(
ALTER TABLE repos ADD COLUMN likes BIGINT NOT NULL DEFAULT 0;
CREATE TABLE repo_likes (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, user_id)
);
CREATE INDEX repo_likes_repo ON repo_likes(repo_id, created_at, user_id);
CREATE INDEX repo_likes_user ON repo_likes(user_id, created_at, repo_id);
CREATE INDEX repos_likes ON repos(likes, id);
CREATE INDEX repos_type_likes ON repos(type, likes, id);
)sql";

// Version 20: a space's SDK (issue 19 §6): "gradio", "streamlit", "docker", "static", or ''.
constexpr const char kV20[] = R"sql(
ALTER TABLE repos ADD COLUMN sdk VARCHAR(16) NOT NULL DEFAULT '';
)sql";

// Version 21: discussions and pull requests (issue 19 §2, docs/discussions.md). Numbered
// per repo; a pull request's base ref, the refs/pr/<num> commit last seen (to tell new
// commits), its merge commit and the base's commit it merged into (its diff once merged). Their
// events, oldest first by id; a comment's text versions (the first included), erased when it is
// hidden.
constexpr const char kV21[] = R"sql(
CREATE TABLE discussions (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  num INTEGER NOT NULL,
  pull_request INTEGER NOT NULL DEFAULT 0,
  title TEXT NOT NULL,
  status VARCHAR(8) NOT NULL,
  author_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
  author_name TEXT NOT NULL,
  base_ref TEXT NOT NULL DEFAULT '',
  head_oid VARCHAR(64) NOT NULL DEFAULT '',
  merge_oid VARCHAR(64) NOT NULL DEFAULT '',
  base_oid VARCHAR(64) NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (repo_id, num),
  CHECK (status IN ('open', 'closed', 'merged', 'draft'))
);
CREATE INDEX discussions_open_prs ON discussions(repo_id, pull_request, status);
CREATE TABLE discussion_events (
  id {{ID}},
  repo_id BIGINT NOT NULL,
  num INTEGER NOT NULL,
  kind VARCHAR(16) NOT NULL,
  author_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
  author_name TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT '',
  edited INTEGER NOT NULL DEFAULT 0,
  hidden INTEGER NOT NULL DEFAULT 0,
  editor_name TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  FOREIGN KEY (repo_id, num) REFERENCES discussions(repo_id, num) ON DELETE CASCADE,
  CHECK (kind IN ('comment', 'status-change', 'title-change', 'commit'))
);
CREATE INDEX discussion_events_thread ON discussion_events(repo_id, num, id);
CREATE TABLE comment_versions (
  event_id BIGINT NOT NULL REFERENCES discussion_events(id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  body TEXT NOT NULL,
  author_name TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (event_id, version)
);
)sql";

// Version 22: LFS file management (issue 19 §4, docs/lfs-files.md). When each link was made
// (lfs-files' pushedAt), and the permanent deletions of LFS objects: who, which objects,
// whether the history was rewritten and the refs that moved.
constexpr const char kV22[] = R"sql(
ALTER TABLE lfs_links ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
CREATE TABLE lfs_purges (
  id {{ID}},
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  user_name TEXT NOT NULL,
  oids TEXT NOT NULL,
  rewrite INTEGER NOT NULL,
  refs TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX lfs_purges_repo ON lfs_purges(repo_id, id);
)sql";

// Version 23: webhooks (issue 19 §5, docs/webhooks.md): users' webhooks, what each watches,
// the log of their last deliveries; and the refs each repo was last seen with, from which
// a push's updated refs are computed (repos older than this table are marked unknown: their
// next push records their refs without reporting them).
constexpr const char kV23[] = R"sql(
CREATE TABLE webhooks (
  id VARCHAR(24) PRIMARY KEY,
  owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret TEXT NOT NULL DEFAULT '',
  domains TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_owner ON webhooks(owner_id, created_at);
CREATE TABLE webhook_watches (
  webhook_id VARCHAR(24) NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  pos INTEGER NOT NULL,
  kind VARCHAR(8) NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (webhook_id, kind, name),
  CHECK (kind IN ('model', 'dataset', 'space', 'user', 'org'))
);
CREATE INDEX webhook_watches_target ON webhook_watches(kind, name);
CREATE TABLE webhook_deliveries (
  id {{ID}},
  webhook_id VARCHAR(24) NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  repo TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  latency_ms BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries(webhook_id, id);
CREATE TABLE ref_heads (
  repo_id BIGINT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  ref TEXT NOT NULL,
  oid VARCHAR(64) NOT NULL,
  PRIMARY KEY (repo_id, ref)
);
CREATE TABLE ref_heads_unknown (
  repo_id BIGINT PRIMARY KEY REFERENCES repos(id) ON DELETE CASCADE
);
INSERT INTO ref_heads_unknown (repo_id) SELECT id FROM repos;
)sql";

// Version 24: collections (issue 19 §6, docs/collections.md). A user's or an org's curated
// list (owner_id: users holds both), its place in the owner's list (position) and its title,
// once per owner. Its items, ordered by position: a repo (model, dataset, space) or another
// collection, each at most once per collection; a deleted repo or collection leaves the
// collections that held it with it (ON DELETE CASCADE). Number 23 is the webhooks'.
constexpr const char kV24[] = R"sql(
CREATE TABLE collections (
  id {{ID}},
  owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  private INTEGER NOT NULL DEFAULT 0,
  theme VARCHAR(16) NOT NULL DEFAULT 'default',
  position BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (owner_id, title)
);
CREATE INDEX collections_owner ON collections(owner_id, position, id);
CREATE INDEX collections_updated ON collections(updated_at, id);
CREATE TABLE collection_items (
  id {{ID}},
  collection_id BIGINT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  kind VARCHAR(16) NOT NULL,
  repo_id BIGINT REFERENCES repos(id) ON DELETE CASCADE,
  ref_id BIGINT REFERENCES collections(id) ON DELETE CASCADE,
  position BIGINT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  UNIQUE (collection_id, repo_id),
  UNIQUE (collection_id, ref_id),
  CHECK (kind IN ('model', 'dataset', 'space', 'collection')),
  CHECK ((kind = 'collection') = (ref_id IS NOT NULL AND repo_id IS NULL))
);
CREATE INDEX collection_items_order ON collection_items(collection_id, position, id);
CREATE INDEX collection_items_repo ON collection_items(repo_id);
CREATE INDEX collection_items_ref ON collection_items(ref_id);
)sql";

constexpr Migration kMigrations[] = {
    {1, kV1},
    {2, kV2},
    {3, kV3},
    {4, kV4},
    {5, kV5},
    {6, kV6},
    {7, kV7},
    {8, kV8},
    {9, kV9},
    {10, kV10},
    {11, kV11},
    {12, kV12},
    {13, "", kV13Sqlite, kV13Postgres},
    {14, kV14},
    {15, kV15},
    {16, kV16},
    {17, kV17},
    {18, kV18},
    {19, kV19},
    {20, kV20},
    {21, kV21},
    {22, kV22},
    {23, kV23},
    {24, kV24},
};

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

}  // namespace

std::span<const Migration> AllMigrations() { return kMigrations; }

std::string RenderMigration(const Migration& m, SqlDialect dialect) {
  std::string sql =
      std::string(m.sql) + (dialect == SqlDialect::Sqlite ? m.sqlite_sql : m.postgres_sql);
  // SQLite: AUTOINCREMENT so an id is never reused after a delete (tickets and links
  // name repos by id; a new repo must not inherit a deleted one's).
  ReplaceAll(sql, "{{ID}}",
             dialect == SqlDialect::Sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT"
                                           : "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
  ReplaceAll(sql, "{{BYTES}}", dialect == SqlDialect::Sqlite ? "BLOB" : "BYTEA");
  ReplaceAll(sql, "{{ROW_ORDER}}", dialect == SqlDialect::Sqlite ? "rowid" : "0");
  return sql;
}

}  // namespace hangar::db

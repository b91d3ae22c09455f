#pragma once
// Config: every setting of a Hangar process, with its default in the initializer.
// Layers (DESIGN.md §Configuration): embedded defaults → TOML file → HANGAR_* environment
// → command-line overrides. Every key is listed in docs/config.md.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace hangar::config {

// Which BlobStore holds LFS objects and OCI blobs.
enum class BlobsKind { Local, S3 };
// How blob downloads reach clients: through Hangar, or by redirect to a presigned URL.
enum class DownloadMode { Proxy, Redirect };
// How blob uploads reach the store: through Hangar, or straight to presigned URLs.
enum class UploadMode { Proxy, Direct };

// [server]
struct ServerConfig {
  std::string listen = "127.0.0.1:8080";  // host:port or [v6]:port; port 0 = any free port
  std::string public_url;                 // "" = derive from the request's Host; no trailing '/'
  int threads = 0;                        // I/O threads; 0 = one per core (LoadConfig resolves it)
  int worker_threads = 0;                 // blocking-work pool; 0 = max(8, 4 × cores) (resolved)
  int64_t max_header_bytes = 16384;       // request line + headers, bytes (431 above)
  int idle_timeout_s = 60;                // keep-alive connection idle timeout, seconds
  int shutdown_grace_s = 30;              // on SIGTERM, seconds to let requests finish
  int drain_delay_ms = 0;  // on SIGTERM, ms of not-ready serving before accepting stops
                           // (a load balancer's health checks see it leave); 0 = none
};

// [storage]
struct StorageConfig {
  std::string data_dir = "./hangar-data";            // root of repos/, blobs/, tmp/, hangar.db
  BlobsKind blobs = BlobsKind::Local;                // "local" | "s3"
  DownloadMode download_mode = DownloadMode::Proxy;  // "proxy" | "redirect"
  UploadMode upload_mode = UploadMode::Proxy;        // "proxy" | "direct"
  // The bucket when blobs = "s3" (storage/s3/s3_blob_store.h; docs/config.md):
  std::string s3_endpoint;  // "" = https://s3.<region>.amazonaws.com
  std::string s3_bucket;    // must exist; required with blobs = "s3"
  std::string s3_region = "us-east-1";
  std::string s3_access_key;  // SigV4 credentials
  std::string s3_secret_key;
  bool s3_path_style = false;  // <endpoint>/<bucket>/<key> (MinIO, Ceph, moto)
  std::string s3_prefix;       // prepended to every object key, e.g. "hangar/"
  int s3_url_ttl_s = 3600;     // lifetime of presigned URLs (redirects, parts), seconds
};

// [database]
struct DatabaseConfig {
  std::string sqlite_path;   // "" = <data_dir>/hangar.db (LoadConfig resolves it)
  std::string url;           // "" = use SQLite; else postgres://user:pass@host/db
  int max_connections = 16;  // connections of this process's pool
};

// [limits]
struct LimitsConfig {
  int pack_concurrency = 3;                // git upload-pack processes running at once
  int pack_per_principal = 2;              // of which one user/token/IP may hold
  int pack_queue = 32;                     // clones waiting for a slot; beyond: 429
  int pack_queue_wait_s = 60;              // longest wait in that queue, seconds; then 429
  int push_concurrency = 2;                // git receive-pack processes per user or deploy key
  int password_hash_concurrency = 2;       // argon2id verifications running at once
  int64_t max_json_body_bytes = 10 << 20;  // JSON request bodies, bytes (413 above)
  int max_lfs_batch_objects = 1000;        // objects in one LFS batch request
  int64_t max_upload_bytes = 0;            // one uploaded file/blob, bytes; 0 = unlimited
  int64_t multipart_threshold_bytes = int64_t{64} << 20;  // LFS objects sent in parts from
                                                          // this size on; 0 = never
  int64_t multipart_chunk_bytes = int64_t{16} << 20;      // size of those parts
  int64_t upload_part_bytes = int64_t{64} << 20;          // native uploads' part size without a
                                                          // client hint (docs/uploads.md)
  int upload_expiry_s = 86400;                            // an upload lives this long after its
                                                          // creation or last part, seconds
  int max_open_uploads = 1000;                            // open native uploads per user; 0 = any
  // Request bodies (issue 13 "bodies never hold threads"; docs/config.md §limits):
  int64_t body_buffer_bytes = 1 << 20;   // bodies up to this are read by the I/O layer before
                                         // the handler runs; also the largest body of an
                                         // unauthenticated caller (413 above)
  int64_t body_memory_bytes = 64 << 20;  // all those buffers together, bytes
  int body_memory_wait_s = 2;            // a body over that budget waits this long; then 503
  int64_t min_body_rate = 1024;          // bytes/s a body must average over body_rate_window_s
                                         // of waiting for it; slower: 408; 0 = no minimum
  int body_rate_window_s = 30;           // that window, seconds
  int body_time_limit_s = 3600;          // one body from admission to its last byte, seconds
                                         // (408 after); 0 = none
  int connections_per_ip = 256;          // open connections from one IP; beyond: 429; 0 = any
  int anonymous_bodies_per_ip = 64;      // bodies in flight from unauthenticated callers of one
                                         // IP; beyond: 429; 0 = any
  int bodies_per_principal = 16;         // bodies larger than body_buffer_bytes in flight for
                                         // one signed-in user; beyond: 429; 0 = any
  int streaming_bodies = 1024;           // bodies larger than body_buffer_bytes in flight in
                                         // all (a thread each); beyond: 503
  int64_t handler_memory_bytes = int64_t{512} << 20;  // what the handlers of those bodies
                                                      // keep of them, together, bytes
  int handler_memory_wait_s = 30;  // a handler over that budget waits this long; then 503
};

// [auth]
struct AuthConfig {
  int ticket_ttl_s = 3600;  // lifetime of credentials in LFS action hrefs, seconds
  std::string secret_file;  // "" = <data_dir>/secret: server signing key, made on first
                            // start with mode 0600 (LoadConfig resolves the path)
};

// [cache]
struct CacheConfig {
  int entries = 100000;  // size of each cache of immutable data (entries, pointers, links)
  int ttl_ms = 1000;     // how long tokens, org memberships and repo rows are kept, ms; a
                         // change made through any replica evicts them at once (issue 17)
};

// [gc] (docs/gc.md)
struct GcConfig {
  int interval_s = 3600;  // `hangar serve` collects garbage this often, seconds; 0 = never
  int grace_s = 86400;    // blobs, uploads and temporaries untouched for less stay, seconds
};

// [ssh] (issue 18 §1, docs/ssh.md): git over SSH through OpenSSH's sshd, which runs
// `hangar keys` and `hangar serv`; they reach this process over a Unix socket.
struct SshConfig {
  bool enabled = false;      // serve the socket sshd's commands reach
  std::string socket;        // "" = <data_dir>/serv.sock (LoadConfig resolves it)
  std::string user = "git";  // the SSH login name shown in clone URLs
  std::string host;          // host in clone URLs; "" = server.public_url's host
  int port = 22;             // port in clone URLs (shown as ssh://…:port/ when not 22)
  int max_sessions = 64;     // SSH git sessions at once; more are refused
};

// [git_daemon] (issue 18 §2): git:// for public repos, read-only.
struct GitDaemonConfig {
  std::string listen;        // host:port; "" = off
  int max_connections = 64;  // connections at once; more are refused
};

// [jobs] (issue 17 §3): the durable job queue's runner in this process
struct JobsConfig {
  bool in_process = true;  // `hangar serve` runs jobs itself; false: only `hangar worker`s do
  int threads = 2;         // jobs run at once by one process
  int lease_s = 30;        // a claim's lease; a job whose process died is taken up after it
  int trending_interval_s = 600;  // repos' trending scores are refreshed this often; 0 = never
};

// [maintenance] (docs/maintenance.md): repacking repositories into a git-optimal layout
struct MaintenanceConfig {
  bool enabled = true;           // the "gc" job maintains repos that need it
  int full_growth_percent = 25;  // full maintenance when objects grew this much since the last
  int light_packs = 16;          // light maintenance (packs merged) at this many packs
  int timeout_s = 3600;          // one maintenance of one repo, all steps, seconds
  int threads = 0;               // pack.threads of the repack; 0 = one per core
  bool after_import = true;      // web imports queue a full maintenance (the CLI: --no-maintain)
};

// [import] (docs/import.md): web imports of git repositories
struct ImportConfig {
  // Hosts a web import may read although they resolve to loopback, private or link-local
  // addresses: space- or comma-separated host names or addresses as URLs name them; "*" =
  // any host. Empty: public addresses only (the server cannot be made to reach its own
  // network). `hangar import` on the command line is not limited.
  std::string allow_private_hosts;
};

// [webhooks] (issue 19 §5, docs/webhooks.md): users' webhooks and their deliveries
struct WebhooksConfig {
  // Hosts a webhook may POST to although they resolve to non-public addresses, as
  // [import] allow_private_hosts ("*" = any host). Empty: public addresses only.
  std::string allow_private_hosts;
  int timeout_s = 10;      // one delivery's whole request
  int max_attempts = 5;    // tries of one delivery, then it is dead
  int retry_base_s = 10;   // back-off after the first failure, doubled per try
  int threads = 2;         // deliveries at once in one process (their own job threads)
  int max_per_user = 100;  // webhooks one user may have
};

// [mirrors] (issue 18 §4, docs/mirrors.md): pull and push mirrors
struct MirrorsConfig {
  // Directories whose repositories mirrors may name by path (pull from, push to): space-
  // or comma-separated absolute paths. Empty: no local path (URLs only).
  std::string local_roots;
  int interval_s = 3600;    // a pull mirror's schedule when its creator gives none
  int min_interval_s = 60;  // the shortest schedule a creator may ask for
  int timeout_s = 1800;     // one sync, every step together
  int max_syncs = 1;        // syncs at once in one process (below jobs.threads)
  int tick_s = 60;          // how often due pull mirrors are looked for; 0 = never
};

// [upstream] (issue 18 §5, docs/upstream.md): a pull-through cache of upstream hubs
struct UpstreamConfig {
  // The upstream hubs' base URLs (http or https), space- or comma-separated, the first
  // tried first; "" = no cache.
  std::string url;
  std::string token;  // sent to the upstreams as a Bearer token; "" = anonymous
  // Repo patterns ("ns/name", "datasets/ns/*"; '*' matches anything), space- or
  // comma-separated: allow "" = every repo; deny wins over allow.
  std::string allow;
  std::string deny;
  int ttl_s = 300;             // a cached repo read after this is revalidated
  int negative_ttl_s = 60;     // a repo no upstream has is not asked for again this long
  int64_t max_file_bytes = 0;  // larger files are not cached (refused); 0 = no limit
  int max_waiting = 4;         // requests waiting for the upstream at once; more get 503
};

// [oci] (docs/oci.md): the registry at /v2/
struct OciConfig {
  std::string challenge = "bearer";      // "bearer" (the /v2/token flow) | "basic"
  int token_ttl_s = 300;                 // lifetime of registry tokens, seconds (60–86400)
  std::string service;                   // token audience; "" = the request's Host
  int64_t max_manifest_bytes = 4 << 20;  // larger manifest PUTs get 413
  int max_open_uploads = 1000;           // blob uploads open at once; beyond: 429; 0 = any
  int upload_idle_s = 3600;              // an upload untouched this long is dropped, seconds
};

// [viewer] (docs/viewer.md): the dataset viewer's Parquet export and its queries (issue 15)
struct ViewerConfig {
  bool enabled = true;            // datasets are exported after each push
  int workers = 1;                // exports running at once (each has its own thread)
  int64_t row_group_rows = 4096;  // rows per row group of a written shard
  int row_groups_per_file = 8;    // row groups per written shard
  int64_t max_parquet_bytes = int64_t{5} << 30;  // a split's export stops past it (partial)
  int64_t max_source_bytes = int64_t{20} << 30;  // source bytes a split reads at most
  int64_t native_max_row_group_rows = 100000;    // a Parquet source is indexed as it is when
  int native_max_row_groups = 200;               // its row groups are no larger and fewer
  int64_t memory_bytes = int64_t{1} << 30;       // DuckDB memory of each engine (reads, export)
  int threads = 0;                               // DuckDB threads of each engine; 0 = one per core
  int export_timeout_s = 3600;                   // one statement of the export, seconds
  int query_timeout_ms = 10000;                  // one query of the API, milliseconds
  int64_t max_rows_bytes = 16 << 20;  // one /rows answer's cells, bytes (TooBigContentError)
  int state_ttl_ms = 2000;            // how long a dataset's state is served from memory
};

// [gateway] (docs/gateway.md): the gateway's proxy (issue 16)
struct GatewayConfig {
  int health_interval_ms = 2000;  // active health checks of every backend; 0 = none
};

// [runtimes.<name>] (docs/gateway.md §Supervised runtimes): a command Hangar starts to
// serve one model version from a snapshot of its files, as a route's backend.
struct RuntimeTemplate {
  // argv; in each element {snapshot} (the snapshot directory), {port}, {model} and
  // {version} are replaced. Required, not empty.
  std::vector<std::string> command;
  std::string protocol = "oip";  // what it speaks: "oip" or "openai"
  std::string ready_path;        // answers 2xx once it serves; "" = /v2/health/ready or /health
  int start_timeout_s = 60;      // to become ready, 1 … 3600
};

// [log]
struct LogConfig {
  std::string level = "info";          // trace | debug | info | warn | error | critical | off
  bool access_log = true;              // one line per request
  std::string access_format = "text";  // text | json (one JSON object a line)
  // OTLP/HTTP (JSON) endpoint the spans of requests are sent to, e.g.
  // "http://collector:4318/v1/traces"; "" = none
  std::string otlp_endpoint;
  std::string service_name = "hangar";  // the spans' service.name
};

// The whole configuration. A plain value; copy it freely. Nothing reads it globally:
// each component's constructor takes its own section.
struct Config {
  ServerConfig server;
  StorageConfig storage;
  DatabaseConfig database;
  LimitsConfig limits;
  AuthConfig auth;
  CacheConfig cache;
  GcConfig gc;
  JobsConfig jobs;
  SshConfig ssh;
  GitDaemonConfig git_daemon;
  MaintenanceConfig maintenance;
  ImportConfig import;
  WebhooksConfig webhooks;
  MirrorsConfig mirrors;
  UpstreamConfig upstream;
  OciConfig oci;
  ViewerConfig viewer;
  GatewayConfig gateway;
  std::map<std::string, RuntimeTemplate> runtimes;  // by name
  LogConfig log;
};

// Where LoadConfig reads from.
struct LoadOptions {
  // A TOML file (--config). When absent, HANGAR_CONFIG names one, if set.
  std::optional<std::filesystem::path> config_file;
  // TOML text applied in the file's place when config_file is absent (tests, embedding).
  std::optional<std::string> config_toml;
  // Environment lookup; nullptr = ::getenv. Returns nullopt for an unset variable.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  // Flag values, applied last, in order: {"server.listen", "127.0.0.1:0"}.
  std::vector<std::pair<std::string, std::string>> overrides;
};

// Builds the configuration: defaults, then the TOML file, then environment variables
// (HANGAR_<SECTION>_<KEY> for every key, e.g. HANGAR_LIMITS_PACK_QUEUE, plus the short
// forms HANGAR_DATA_DIR, HANGAR_LISTEN, HANGAR_PUBLIC_URL, HANGAR_LOG_LEVEL, which the
// long forms override), then `overrides`. Then validates and resolves it (Finalize).
// Errors: BadRequest naming the source and the key, e.g. "config file hangar.toml:
// unknown key 'server.lisen'" or "HANGAR_SERVER_THREADS: expected an integer, got 'x'",
// also when the config file cannot be read. A bad value in any layer is an error, even
// when a later layer would replace it.
Result<Config> LoadConfig(const LoadOptions& options);

// Checks cross-field rules (listen parses, public_url is http(s), ...) and fills the
// derived defaults: server.threads, server.worker_threads, database.sqlite_path,
// auth.secret_file; strips a trailing '/' from server.public_url.
// Errors: BadRequest naming the key.
Result<void> Finalize(Config& config);

// Sets one key from its string form, as a flag or environment variable would:
// SetKey(c, "limits.pack_queue", "64"). Errors: BadRequest (unknown key, bad value).
Result<void> SetKey(Config& config, std::string_view key, std::string_view value);

// Splits a "--set key=value" flag into its key and value. Errors: BadRequest.
Result<std::pair<std::string, std::string>> ParseOverride(std::string_view flag);

// The configuration as TOML: every key, in docs/config.md's order (`hangar config`).
std::string ToToml(const Config& config);

// Splits a listen address into host and port: "127.0.0.1:8080" → {"127.0.0.1", 8080},
// "[::1]:0" → {"::1", 0}, "localhost:80" → {"localhost", 80}. Errors: BadRequest for a
// missing host or port, a port over 65535, or an unbracketed IPv6 address.
Result<std::pair<std::string, uint16_t>> ParseListen(std::string_view listen);

// Wire names of the enums, as written in TOML ("local", "redirect", ...).
std::string_view Name(BlobsKind v);
std::string_view Name(DownloadMode v);
std::string_view Name(UploadMode v);

}  // namespace hangar::config

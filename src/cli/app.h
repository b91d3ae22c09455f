#pragma once
// App: the composition root. Opens the stores, builds the services and, for `serve`,
// the router with every API's routes in the order their patterns need.

#include <atomic>
#include <memory>

#include "api/oci/oci_auth.h"
#include "config/config.h"
#include "core/result.h"
#include "db/stores.h"
#include "duckdb/engine.h"
#include "git/repo_reader.h"
#include "http/router.h"
#include "metrics/http_metrics.h"
#include "metrics/metrics.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/auth/authenticator.h"
#include "services/auth/session_service.h"
#include "services/collection/collection_service.h"
#include "services/content/commit_service.h"
#include "services/content/content_service.h"
#include "services/content/repo_storage.h"
#include "services/discussion/discussion_service.h"
#include "services/gateway/gateway_proxy.h"
#include "services/gateway/gateway_service.h"
#include "services/gateway/runtime_supervisor.h"
#include "services/git/git_service.h"
#include "services/git/import_service.h"
#include "services/git/ssh_keys.h"
#include "services/jobs/job_runner.h"
#include "services/lfs/lfs_service.h"
#include "services/maintenance/gc_service.h"
#include "services/maintenance/maintenance_service.h"
#include "services/mirror/mirror_service.h"
#include "services/mirror/upstream_cache.h"
#include "services/oci/oci_projection.h"
#include "services/oci/oci_service.h"
#include "services/registry/registry_service.h"
#include "services/repo/gate_service.h"
#include "services/repo/repo_service.h"
#include "services/social/social_service.h"
#include "services/uploads/upload_service.h"
#include "services/viewer/export_job.h"
#include "services/viewer/export_queue.h"
#include "services/viewer/viewer_service.h"
#include "services/webhook/webhook_service.h"
#include "storage/local/local_blob_store.h"

namespace hangar::cli {

// Owns everything a running hub (or an admin command) needs. Not thread-safe to build;
// the services it holds are.
class App {
 public:
  // Creates the data dir layout, opens the database (running migrations) and the blob
  // store, loads or creates the server secret. Errors: Internal, BadRequest (config).
  static Result<std::unique_ptr<App>> Open(const config::Config& config);

  // An admin command's App: the config from `config_file` ("" = defaults and environment)
  // with storage.data_dir set to `data_dir` unless empty, then Open. Errors: as Open, and
  // those of config::LoadConfig.
  static Result<std::unique_ptr<App>> OpenFor(const std::string& config_file,
                                              const std::string& data_dir);
  ~App();

  // Opens the dataset viewer (docs/viewer.md): its DuckDB engines under <data>/viewer/, its
  // export job and queue, and its service; pushes to datasets queue their export from then
  // on, and Router() adds its routes and pages. `hangar serve` calls it (with
  // viewer.enabled) before Router(); admin commands do not pay for it. Call at most once.
  // Errors: Internal (DuckDB, the data dir).
  Result<void> OpenViewer();

  // Builds the router with all routes (api → lfs → git → files). Call once.
  http::Router& Router();

  // Whether this process should get requests (GET /readyz): not while draining; the
  // database reachable with its schema at this binary's version; the blob store usable.
  // Errors: Unavailable naming what is not ready.
  Result<void> Ready();
  // A graceful stop began (SIGTERM): Ready fails from now on. Thread-safe.
  void BeginDrain() { draining_ = true; }
  // The job queue's runner (docs/config.md [jobs]): `hangar serve` (jobs.in_process) and
  // `hangar worker` start it; admin commands only queue.
  services::JobRunner& jobs() { return *jobs_; }
  // Starts the job runners: the queue's, and the webhook deliveries' own (so a slow
  // receiver holds none of the other jobs' threads).
  void StartJobs();
  // The server listens at `host`:`port`: webhooks learn where the hub is (their payloads'
  // URLs unless server.public_url is set, and no webhook may target it).
  void Listening(const std::string& host, uint16_t port);
  // Queues the maintenance of the repository at `git_path` as a "maintain" job (a queued
  // one of the same path absorbs it). Returns the job's id. Errors: the store's.
  Result<int64_t> QueueMaintenance(const std::string& git_path, services::MaintenanceLevel level);
  // What the server tells of each request (GET /metrics); null before Router().
  metrics::HttpMetrics* http_metrics() { return http_metrics_.get(); }

  const config::Config& config() const { return config_; }
  // Tokens: the authenticator of every route, and the token admin commands.
  services::Authenticator& authenticator() { return *authenticator_; }
  // Users, passwords, orgs and memberships (admin commands, sign-in, the web pages).
  services::AccountService& accounts() { return *accounts_; }
  // Who may do what in a namespace (RepoService::Open and the services' own checks).
  services::AccessPolicy& access() { return *access_; }
  services::RepoService& repos() { return *repos_; }
  // SSH public keys and deploy keys (docs/ssh.md): their API and pages, `hangar admin
  // ssh-key|deploy-key`, and sshd's `hangar keys` / `hangar serv`.
  services::SshKeyService& ssh_keys() { return *ssh_keys_; }
  // Git over every transport: HTTP's routes, and the SSH socket and git:// that Serve starts.
  services::GitService& git() { return *git_; }
  // The server secret (signs tickets and credentials).
  const std::string& secret() const { return secret_; }
  // Garbage collection (`hangar admin gc`, and `hangar serve` every gc.interval_s).
  services::GcService& gc() { return *gc_; }
  // Repository maintenance (docs/maintenance.md): `hangar admin maintain`, `hangar import`,
  // the jobs behind web imports and garbage collection.
  services::MaintenanceService& maintenance() { return *maintenance_; }
  // Pull and push mirrors (docs/mirrors.md): their API, `hangar admin mirror`, their jobs.
  services::MirrorService& mirrors() { return *mirrors_; }
  // The dataset viewer (docs/viewer.md); null when viewer.enabled is false.
  services::viewer::ViewerService* viewer() { return viewer_.get(); }

 private:
  explicit App(config::Config config);
  // The registry's services and its credentials (docs/oci.md), signing with `secret`.
  void OpenRegistry(const std::string& secret);
  // The gauges read when /metrics is scraped (database pool, git slots, jobs).
  void AddScrapeHooks();
  // The job runner and the handlers of the jobs this binary knows.
  void OpenJobs();
  // The mirror service, its jobs ("mirror.pull", "mirror.push", "mirror.tick") and its
  // push listener; the pull-through cache when [upstream] names hubs.
  void OpenMirrors();
  // The webhook service, its delivery runner and job, and its push, repo and discussion
  // listeners (docs/webhooks.md).
  void OpenWebhooks();
  // Job "gc": a collection, then the maintenance of repos that need it.
  Result<void> RunGc(std::stop_token stop);
  // The "trending" job: repos' trending scores over the window ending today.
  Result<void> RefreshTrending();
  // Job "maintain": key "<level>:<git path>", payload the level ("full" or "light").
  Result<void> RunMaintain(const db::JobRecord& job, std::stop_token stop);

  config::Config config_;
  std::string secret_;
  std::atomic<bool> draining_{false};
  metrics::Registry metrics_;  // before everything that counts into it
  std::unique_ptr<metrics::HttpMetrics> http_metrics_;
  db::Stores stores_;
  std::unique_ptr<storage::BlobStore> blobs_;  // LocalBlobStore or S3BlobStore (storage.blobs)
  std::unique_ptr<git::RepoReader> reader_;
  std::unique_ptr<services::Authenticator> authenticator_;
  std::unique_ptr<services::AccessPolicy> access_;
  std::unique_ptr<services::AccountService> accounts_;  // after access_, which it tells of changes
  std::unique_ptr<services::RepoService> repos_;
  std::unique_ptr<services::GateService> gates_;              // gated repos' access requests
  std::unique_ptr<services::SocialService> social_;           // likes, overviews
  std::unique_ptr<services::CollectionService> collections_;  // users' curated lists
  std::unique_ptr<services::ContentService> content_;
  std::unique_ptr<services::LfsService> lfs_;
  std::unique_ptr<services::CommitService> commits_;
  std::unique_ptr<services::DiscussionService> discussions_;   // discussions, pull requests
  std::unique_ptr<services::RepoStorageService> storage_;      // super-squash, lfs-files
  std::unique_ptr<services::RegistryService> model_registry_;  // the model registry (issue 16)
  std::unique_ptr<services::RuntimeSupervisor> runtimes_;      // the gateway's own backends
  std::unique_ptr<services::GatewayService> gateway_;          // its routes (issue 16)
  std::unique_ptr<services::GatewayProxy> gateway_proxy_;      // the gateway itself
  std::unique_ptr<services::UploadService> uploads_;
  std::unique_ptr<services::GitService> git_;
  std::unique_ptr<services::SshKeyService> ssh_keys_;
  std::unique_ptr<services::GcService> gc_;
  std::unique_ptr<services::MaintenanceService> maintenance_;
  std::unique_ptr<services::SessionService> sessions_;
  std::unique_ptr<services::ImportService> imports_;
  std::unique_ptr<services::MirrorService> mirrors_;
  std::unique_ptr<services::UpstreamCache> upstream_;  // [upstream]: null when off
  std::unique_ptr<services::WebhookService> webhooks_;
  std::unique_ptr<services::JobRunner> jobs_;          // after what its handlers use: stopped first
  std::unique_ptr<services::JobRunner> webhook_jobs_;  // the deliveries' own threads
  std::unique_ptr<services::OciProjection> oci_projection_;
  std::unique_ptr<services::OciService> oci_;
  std::unique_ptr<api::OciAuth> oci_auth_;
  // The viewer's members; the queue last, so it is destroyed first and joins its jobs
  // before the job, the service they tell of changes and the engines go.
  std::unique_ptr<duckdb::Engine> viewer_reader_, viewer_rows_reader_, viewer_writer_;
  std::unique_ptr<services::viewer::ExportJob> export_job_;
  std::unique_ptr<services::viewer::ViewerService> viewer_;
  std::unique_ptr<services::viewer::ExportQueue> export_queue_;
  struct Routes;
  std::unique_ptr<Routes> routes_;
};

// The maintenance options of config `c`: [maintenance] and gc.grace_s
// (docs/maintenance.md).
services::MaintenanceOptions MaintenanceOptionsFrom(const config::Config& c);

}  // namespace hangar::cli

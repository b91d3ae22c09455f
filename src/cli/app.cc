#include "cli/app.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "api/collection/collection_routes.h"
#include "api/discussion/discussion_routes.h"
#include "api/error_render.h"
#include "api/gate/gate_routes.h"
#include "api/gateway/gateway_routes.h"
#include "api/gateway/proxy_routes.h"
#include "api/git/git_routes.h"
#include "api/hf/hf_routes.h"
#include "api/lfs/lfs_routes.h"
#include "api/mirror/mirror_routes.h"
#include "api/oci/oci_routes.h"
#include "api/registry/registry_routes.h"
#include "api/social/social_routes.h"
#include "api/ssh/ssh_key_routes.h"
#include "api/storage/storage_routes.h"
#include "api/uploads/upload_routes.h"
#include "api/viewer/viewer_routes.h"
#include "api/webhook/webhook_routes.h"
#include "core/log.h"
#include "core/util.h"
#include "db/sql/sql_stores.h"
#include "net/address.h"
#include "storage/metered/metered_blob_store.h"
#include "storage/s3/s3_blob_store.h"
#include "web/error_page.h"
#include "web/web_routes.h"
#include "web/web_util.h"

namespace hangar::cli {

namespace fs = std::filesystem;

namespace {

// The kinds of the jobs the App runs (services::JobRunner).
constexpr std::string_view kGcJob = "gc";
constexpr std::string_view kMaintainJob = "maintain";
constexpr std::string_view kTrendingJob = "trending";

// The server signing key: 32 random bytes kept in `path` (0600), made on first start.
Result<std::string> LoadOrCreateSecret(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::string key((std::istreambuf_iterator<char>(in)), {});
    if (key.size() >= 32) return key;
    return MakeError(ErrorCode::Internal, "secret file " + path.string() + " is too short");
  }
  std::string key = RandomHex(32);
  std::string tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError(ErrorCode::Internal, "cannot create " + tmp);
  bool ok =
      ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && ::fsync(fd) == 0;
  ::close(fd);
  // link() fails if another process created the secret first: then use theirs.
  if (!ok) return MakeError(ErrorCode::Internal, "cannot write " + tmp);
  if (::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    ::unlink(tmp.c_str());
    return MakeError(ErrorCode::Internal, "cannot create " + path.string());
  }
  ::unlink(tmp.c_str());
  std::ifstream again(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(again)), {});
}

// Makes the config's paths absolute (git subprocesses run with the repository as their
// working directory) and creates <data>/repos and <data>/tmp. Errors: Internal.
Result<void> PrepareDataDir(config::Config& c) {
  std::error_code ec;
  c.storage.data_dir = fs::absolute(c.storage.data_dir, ec).lexically_normal().string();
  c.database.sqlite_path = fs::absolute(c.database.sqlite_path, ec).string();
  c.auth.secret_file = fs::absolute(c.auth.secret_file, ec).string();
  fs::path data(c.storage.data_dir);
  fs::create_directories(data / "repos", ec);
  if (!ec) fs::create_directories(data / "tmp", ec);
  if (ec) {
    return MakeError(ErrorCode::Internal,
                     "cannot create data dir " + data.string() + ": " + ec.message());
  }
  return {};
}

// The blob store storage.blobs names. Errors: BadRequest (S3 without a bucket).
Result<std::unique_ptr<storage::BlobStore>> OpenBlobStore(const config::StorageConfig& c) {
  if (c.blobs != config::BlobsKind::S3) {
    return std::unique_ptr<storage::BlobStore>(
        std::make_unique<storage::LocalBlobStore>(fs::path(c.data_dir)));
  }
  if (c.s3_bucket.empty()) {
    return MakeError(ErrorCode::BadRequest,
                     "config: storage.s3_bucket must be set when storage.blobs = \"s3\"");
  }
  storage::S3Options s3;
  s3.endpoint = c.s3_endpoint;
  s3.bucket = c.s3_bucket;
  s3.region = c.s3_region;
  s3.access_key = c.s3_access_key;
  s3.secret_key = c.s3_secret_key;
  s3.path_style = c.s3_path_style;
  s3.prefix = c.s3_prefix;
  s3.direct_parts = c.upload_mode == config::UploadMode::Direct;
  return std::unique_ptr<storage::BlobStore>(std::make_unique<storage::S3BlobStore>(std::move(s3)));
}

services::LfsServiceOptions LfsOptionsFrom(const config::Config& c) {
  services::LfsServiceOptions o;
  o.ticket_ttl = std::chrono::seconds(c.auth.ticket_ttl_s);
  o.download_redirect = c.storage.download_mode == config::DownloadMode::Redirect;
  o.max_objects = static_cast<size_t>(c.limits.max_lfs_batch_objects);
  o.max_object_bytes = static_cast<uint64_t>(c.limits.max_upload_bytes);
  o.multipart_threshold = static_cast<uint64_t>(c.limits.multipart_threshold_bytes);
  o.multipart_chunk_bytes = static_cast<uint64_t>(c.limits.multipart_chunk_bytes);
  return o;
}

services::UploadServiceOptions UploadOptionsFrom(const config::Config& c) {
  services::UploadServiceOptions o;
  o.default_part_bytes = static_cast<uint64_t>(c.limits.upload_part_bytes);
  o.max_object_bytes = static_cast<uint64_t>(c.limits.max_upload_bytes);
  o.expiry = std::chrono::seconds(c.limits.upload_expiry_s);
  o.direct_parts = c.storage.upload_mode == config::UploadMode::Direct;
  o.part_url_ttl = std::chrono::seconds(c.storage.s3_url_ttl_s);
  o.max_open_per_user = c.limits.max_open_uploads;
  return o;
}

services::GitLimits GitLimitsFrom(const config::LimitsConfig& c) {
  services::GitLimits o;
  o.pack_concurrency = c.pack_concurrency;
  o.pack_per_principal = c.pack_per_principal;
  o.pack_queue = c.pack_queue;
  o.pack_queue_wait = std::chrono::seconds(c.pack_queue_wait_s);
  o.push_concurrency = c.push_concurrency;
  return o;
}

services::ContentOptions ContentOptionsFrom(const config::Config& c, const fs::path& data) {
  services::ContentOptions o;
  o.cache_entries = static_cast<size_t>(c.cache.entries);
  // The keyring signatures are verified against (docs/web.md): gpg wants it private.
  o.gnupg_home = (data / "gpg").string();
  std::error_code ec;
  fs::create_directories(o.gnupg_home, ec);
  fs::permissions(o.gnupg_home, fs::perms::owner_all, ec);
  return o;
}

// The words of a config list separated by spaces or commas.
std::vector<std::string> ListOf(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find_first_of(" ,", pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// Web imports' options; after_import is the caller's (it queues a job).
services::ImportOptions ImportOptionsFrom(const config::Config& c) {
  services::ImportOptions o;
  o.tmp_dir = fs::path(c.storage.data_dir) / "tmp";
  // Web imports run inside the request: bounded well below the CLI's hour.
  o.timeout = std::chrono::minutes(10);
  for (const auto& host : ListOf(c.import.allow_private_hosts)) {
    o.private_hosts.push_back(AsciiLower(host));
  }
  return o;
}

// The pull-through cache's options ([upstream], docs/upstream.md); queue_sync is the App's.
services::UpstreamOptions UpstreamOptionsFrom(const config::Config& c) {
  services::UpstreamOptions o;
  for (auto url : ListOf(c.upstream.url)) {
    while (url.ends_with('/')) url.pop_back();
    o.urls.push_back(url);
  }
  o.token = c.upstream.token;
  o.allow = ListOf(c.upstream.allow);
  o.deny = ListOf(c.upstream.deny);
  o.ttl_s = c.upstream.ttl_s;
  o.negative_ttl_s = c.upstream.negative_ttl_s;
  o.max_file_bytes = static_cast<uint64_t>(c.upstream.max_file_bytes);
  o.max_waiting = c.upstream.max_waiting;
  return o;
}

// Mirrors' options ([mirrors], docs/mirrors.md); enqueue is the App's.
services::MirrorOptions MirrorOptionsFrom(const config::Config& c) {
  services::MirrorOptions o;
  for (const auto& root : ListOf(c.mirrors.local_roots)) o.local_roots.emplace_back(root);
  o.private_hosts = ImportOptionsFrom(c).private_hosts;
  o.default_interval_s = c.mirrors.interval_s;
  o.min_interval_s = c.mirrors.min_interval_s;
  o.timeout = std::chrono::seconds(c.mirrors.timeout_s);
  o.max_syncs = c.mirrors.max_syncs;
  return o;
}

}  // namespace

services::MaintenanceOptions MaintenanceOptionsFrom(const config::Config& c) {
  services::MaintenanceOptions o;
  o.timeout = std::chrono::seconds(c.maintenance.timeout_s);
  o.threads = c.maintenance.threads;
  o.unreachable_grace = std::chrono::seconds(c.gc.grace_s);
  o.policy.full_growth_percent = c.maintenance.full_growth_percent;
  o.policy.light_packs = c.maintenance.light_packs;
  return o;
}

struct App::Routes {
  http::Router router;
  // Download counts of /resolve (listings' downloads, trending); declared before the
  // routes that use it, so it is destroyed (and flushes) after them.
  std::unique_ptr<services::DownloadCounter> downloads;
  std::unique_ptr<api::HfDeps> hf;
  std::unique_ptr<web::PageCaches> page_caches;
  std::unique_ptr<web::WebDeps> web;
};

App::App(config::Config config) : config_(std::move(config)) {}
App::~App() = default;

Result<std::unique_ptr<App>> App::OpenFor(const std::string& config_file,
                                          const std::string& data_dir) {
  config::LoadOptions opts;
  if (!config_file.empty()) opts.config_file = config_file;
  if (!data_dir.empty()) opts.overrides.emplace_back("storage.data_dir", data_dir);
  HANGAR_ASSIGN_OR_RETURN(config::Config cfg, config::LoadConfig(opts));
  return Open(cfg);
}

Result<std::unique_ptr<App>> App::Open(const config::Config& config) {
  std::unique_ptr<App> app(new App(config));
  HANGAR_TRY(PrepareDataDir(app->config_));
  const auto& c = app->config_;
  const fs::path data(c.storage.data_dir);
  HANGAR_ASSIGN_OR_RETURN(app->stores_, db::OpenStores(c.database.url, c.database.sqlite_path,
                                                       c.database.max_connections));
  HANGAR_ASSIGN_OR_RETURN(auto blobs, OpenBlobStore(c.storage));
  app->blobs_ = std::make_unique<storage::MeteredBlobStore>(std::move(blobs), app->metrics_);
  HANGAR_TRY(app->blobs_->CheckUsable());
  HANGAR_ASSIGN_OR_RETURN(std::string secret, LoadOrCreateSecret(c.auth.secret_file));
  app->secret_ = secret;
  app->reader_ = std::make_unique<git::RepoReader>();
  // The caches of tokens, memberships and repo rows hear every replica's changes.
  db::ChangeFeed* changes = app->stores_.changes.get();
  const int64_t ttl_ms = c.cache.ttl_ms;
  services::AuthenticatorOptions auth_options;
  auth_options.token_cache_ttl_ms = ttl_ms;
  auth_options.changes = changes;
  auth_options.credential_key = secret;
  auth_options.ssh_keys = app->stores_.ssh_keys.get();
  app->authenticator_ =
      std::make_unique<services::Authenticator>(*app->stores_.users, std::move(auth_options));
  services::AccessPolicyOptions access_options;
  access_options.membership_cache_ttl_ms = ttl_ms;
  access_options.changes = changes;
  app->access_ =
      std::make_unique<services::AccessPolicy>(*app->stores_.users, std::move(access_options));
  services::AccountOptions account_options;
  account_options.password_hash_concurrency = c.limits.password_hash_concurrency;
  app->accounts_ = std::make_unique<services::AccountService>(*app->stores_.users, *app->access_,
                                                              account_options);
  app->repos_ = std::make_unique<services::RepoService>(
      *app->stores_.repos, *app->access_, *app->reader_, data / "repos",
      services::RepoServiceOptions{ttl_ms, changes});
  app->repos_->SetGates(app->stores_.gates.get());
  app->gates_ = std::make_unique<services::GateService>(*app->repos_, *app->stores_.gates,
                                                        *app->stores_.users);
  app->social_ = std::make_unique<services::SocialService>(
      *app->repos_, *app->access_, *app->accounts_, *app->stores_.repos, *app->stores_.likes);
  app->collections_ = std::make_unique<services::CollectionService>(
      *app->repos_, *app->access_, *app->accounts_, *app->stores_.collections);
  app->content_ = std::make_unique<services::ContentService>(
      *app->reader_, *app->blobs_, *app->stores_.lfs, ContentOptionsFrom(c, data));
  app->uploads_ = std::make_unique<services::UploadService>(
      *app->repos_, *app->stores_.repos, *app->stores_.uploads, *app->stores_.lfs, *app->blobs_,
      UploadOptionsFrom(c));
  app->lfs_ = std::make_unique<services::LfsService>(*app->repos_, *app->stores_.lfs, *app->blobs_,
                                                     *app->uploads_, secret, LfsOptionsFrom(c));
  app->commits_ =
      std::make_unique<services::CommitService>(*app->repos_, *app->content_, *app->lfs_);
  app->discussions_ = std::make_unique<services::DiscussionService>(
      *app->repos_, *app->content_, *app->stores_.discussions, ContentOptionsFrom(c, data).diff);
  app->commits_->SetPullRequestOpener(app->discussions_.get());
  app->storage_ = std::make_unique<services::RepoStorageService>(*app->repos_, *app->content_,
                                                                 *app->stores_.lfs);
  app->repos_->AddPushListener(
      [discussions = app->discussions_.get()](
          const services::RepoHandle& repo, const std::string&) { discussions->AfterPush(repo); });
  app->model_registry_ = std::make_unique<services::RegistryService>(
      *app->stores_.registry, *app->stores_.users, *app->access_, *app->repos_, *app->content_);
  services::SupervisorOptions runtime_options;
  runtime_options.dir = data / "runtimes";
  for (const auto& [name, t] : c.runtimes) {
    runtime_options.templates[name] =
        services::RuntimeSpec{t.command, t.protocol, t.ready_path, t.start_timeout_s};
  }
  app->runtimes_ =
      std::make_unique<services::RuntimeSupervisor>(*app->repos_, *app->content_, runtime_options);
  services::GatewayOptions gateway_options;
  services::RuntimeSupervisor* runtimes = app->runtimes_.get();
  gateway_options.runtime_protocol = [runtimes](const std::string& name) {
    return runtimes->ProtocolOf(name);
  };
  app->gateway_ = std::make_unique<services::GatewayService>(
      *app->stores_.gateway, *app->model_registry_, gateway_options);
  services::ProxyOptions proxy_options;
  proxy_options.health_interval_ms = c.gateway.health_interval_ms;
  proxy_options.runtimes = runtimes;
  app->gateway_proxy_ = std::make_unique<services::GatewayProxy>(
      *app->gateway_, *app->model_registry_, proxy_options);
  app->gateway_proxy_->StartHealthChecks();
  services::GcOptions gc_options;
  gc_options.grace = std::chrono::seconds(c.gc.grace_s);
  gc_options.oci = app->stores_.oci.get();
  app->gc_ = std::make_unique<services::GcService>(*app->blobs_, *app->stores_.lfs, *app->uploads_,
                                                   gc_options);
  app->git_ = std::make_unique<services::GitService>(*app->repos_, GitLimitsFrom(c.limits));
  app->ssh_keys_ = std::make_unique<services::SshKeyService>(*app->stores_.ssh_keys,
                                                             *app->stores_.users, *app->repos_);
  app->sessions_ = std::make_unique<services::SessionService>(*app->stores_.users, *app->accounts_);
  app->maintenance_ = std::make_unique<services::MaintenanceService>(
      *app->stores_.repos, *app->repos_, MaintenanceOptionsFrom(c));
  app->OpenJobs();
  services::ImportOptions import_options = ImportOptionsFrom(c);
  if (c.maintenance.after_import) {
    // The request returns once the repo is in place; its repack is a job (any process).
    App* hub = app.get();
    import_options.after_import = [hub](const RepoId&, const std::string& git_path) {
      if (auto queued = hub->QueueMaintenance(git_path, services::MaintenanceLevel::Full);
          !queued) {
        Log("jobs")->warn("queueing the maintenance of {} failed: {}", git_path,
                          queued.error().message);
      }
    };
  }
  app->imports_ = std::make_unique<services::ImportService>(
      *app->stores_.repos, *app->stores_.users, *app->access_, *app->repos_, import_options);
  app->OpenMirrors();
  app->OpenWebhooks();
  app->OpenRegistry(secret);
  return app;
}

Result<void> App::OpenViewer() {
  const auto& v = config_.viewer;
  const fs::path dir = fs::path(config_.storage.data_dir) / "viewer";
  const std::string work = (dir / "work").string(), cache = (dir / "cache").string();
  std::error_code ec;
  for (const auto& d : {work, cache}) fs::create_directories(d, ec);
  if (ec)
    return MakeError(ErrorCode::Internal, "cannot create " + dir.string() + ": " + ec.message());
  duckdb::EngineOptions engine;
  engine.memory_limit_bytes = static_cast<uint64_t>(v.memory_bytes);
  engine.threads = v.threads;
  engine.default_timeout = std::chrono::milliseconds(v.query_timeout_ms);
  engine.default_max_result_bytes = static_cast<uint64_t>(v.max_rows_bytes);
  // The reader sees the shard cache only; the writer the export's work dir too.
  engine.allowed_directories = {cache};
  engine.temp_directory = (dir / "tmp-read").string();
  HANGAR_ASSIGN_OR_RETURN(viewer_reader_, duckdb::Engine::Open(engine));
  // Point reads (/rows): one thread each, a quarter of the memory (a page is a row group).
  duckdb::EngineOptions rows = engine;
  rows.threads = 1;
  rows.memory_limit_bytes = std::max<uint64_t>(engine.memory_limit_bytes / 4, 64ull << 20);
  rows.max_connections = std::max(4, 2 * v.threads);
  rows.temp_directory = "";
  HANGAR_ASSIGN_OR_RETURN(viewer_rows_reader_, duckdb::Engine::Open(rows));
  engine.allowed_directories = {work, cache};
  engine.temp_directory = (dir / "tmp-export").string();
  engine.allow_writes = true;
  engine.max_connections = v.workers;
  engine.default_timeout = std::chrono::seconds(v.export_timeout_s);
  HANGAR_ASSIGN_OR_RETURN(viewer_writer_, duckdb::Engine::Open(engine));

  services::viewer::ExportOptions export_options;
  export_options.work_dir = work;
  export_options.cache_dir = cache;
  auto& limits = export_options.limits;
  limits.row_group_rows = static_cast<uint64_t>(v.row_group_rows);
  limits.row_groups_per_file = static_cast<uint64_t>(v.row_groups_per_file);
  limits.max_parquet_bytes = static_cast<uint64_t>(v.max_parquet_bytes);
  limits.max_source_bytes = static_cast<uint64_t>(v.max_source_bytes);
  limits.native_max_row_group_rows = static_cast<uint64_t>(v.native_max_row_group_rows);
  limits.native_max_row_groups = static_cast<uint64_t>(v.native_max_row_groups);
  limits.timeout = std::chrono::seconds(v.export_timeout_s);
  // The service is made below; the job reaches it through this pointer once it exists.
  export_options.on_change = [this](int64_t repo_id) {
    if (viewer_) viewer_->Invalidate(repo_id);
  };
  export_job_ = std::make_unique<services::viewer::ExportJob>(
      services::viewer::ExportDeps{*stores_.repos, *stores_.viewer, *stores_.lfs, *blobs_, *repos_,
                                   *content_, *viewer_writer_},
      std::move(export_options));
  export_queue_ = std::make_unique<services::viewer::ExportQueue>(
      [this, job = export_job_.get()](int64_t repo_id, const std::atomic<bool>& cancel) {
        auto done = job->Run(repo_id, cancel);
        if (!done)
          Log("viewer")->warn("export of repo {} failed: {}", repo_id, done.error().message);
        // The shards' footers warmed and the search indexes queued (viewer_service.h).
        if (viewer_ && !cancel) viewer_->AfterExport(repo_id);
      },
      v.workers);
  services::viewer::ViewerOptions options;
  options.cache_dir = cache;
  options.search_dir = (dir / "search").string();
  options.state_ttl_ms = v.state_ttl_ms;
  options.file_cache_entries = static_cast<size_t>(config_.cache.entries);
  options.query_timeout = std::chrono::milliseconds(v.query_timeout_ms);
  options.max_result_bytes = static_cast<uint64_t>(v.max_rows_bytes);
  // Statistics read every row of a split once (then they are kept): a minute, not a page's
  // deadline.
  options.statistics_timeout =
      std::max(std::chrono::milliseconds(v.query_timeout_ms), std::chrono::milliseconds(60'000));
  viewer_ = std::make_unique<services::viewer::ViewerService>(
      services::viewer::ViewerDeps{*repos_, *stores_.viewer, *blobs_, *viewer_reader_,
                                   *viewer_rows_reader_, export_queue_.get()},
      std::move(options));
  repos_->AddPushListener(
      [viewer = viewer_.get()](const services::RepoHandle& repo, const std::string& head) {
        viewer->AfterPush(repo, head);
      });
  return {};
}

void App::OpenRegistry(const std::string& secret) {
  const auto& c = config_;
  oci_projection_ = std::make_unique<services::OciProjection>(*reader_, *blobs_, *stores_.oci,
                                                              *stores_.lfs, c.server.public_url);
  services::OciOptions oci_options;
  oci_options.max_manifest_bytes = static_cast<uint64_t>(c.oci.max_manifest_bytes);
  oci_options.max_open_uploads = static_cast<size_t>(c.oci.max_open_uploads);
  oci_options.upload_idle = std::chrono::seconds(c.oci.upload_idle_s);
  oci_ = std::make_unique<services::OciService>(*repos_, *access_, *stores_.repos, *stores_.users,
                                                *stores_.oci, *stores_.lfs, *blobs_,
                                                *oci_projection_, oci_options);
  api::OciAuthOptions oci_auth;
  oci_auth.service = c.oci.service;
  oci_auth.bearer_challenge = c.oci.challenge == "bearer";
  oci_auth.secret = secret;
  oci_auth.token_ttl = std::chrono::seconds(c.oci.token_ttl_s);
  services::Authenticator* authenticator = authenticator_.get();
  oci_auth_ = std::make_unique<api::OciAuth>(
      [authenticator](const http::Request& req) {
        return authenticator->Authenticate(req.Header("authorization"));
      },
      std::move(oci_auth));
}

void App::OpenJobs() {
  const config::Config& c = config_;
  services::JobRunnerOptions options;
  options.threads = c.jobs.threads;
  options.lease_ms = int64_t{c.jobs.lease_s} * 1000;
  options.changes = stores_.changes.get();
  jobs_ = std::make_unique<services::JobRunner>(*stores_.jobs, std::move(options));
  // Garbage collection, then the maintenance of repos that need it (docs/gc.md,
  // docs/maintenance.md), once per gc.interval_s in the whole deployment.
  jobs_->Handle(std::string(kGcJob),
                [this](const db::JobRecord&, std::stop_token stop) { return RunGc(stop); });
  jobs_->Handle(std::string(kMaintainJob), [this](const db::JobRecord& job, std::stop_token stop) {
    return RunMaintain(job, stop);
  });
  if (c.gc.interval_s > 0) {
    const int64_t interval_ms = int64_t{c.gc.interval_s} * 1000;
    jobs_->Every({std::string(kGcJob), "", interval_ms, std::min<int64_t>(interval_ms, 60000), 1});
  }
  // Trending scores drop the days that left their window (db::RepoStore::RefreshTrending),
  // once per jobs.trending_interval_s in the whole deployment.
  jobs_->Handle(std::string(kTrendingJob),
                [this](const db::JobRecord&, std::stop_token) { return RefreshTrending(); });
  if (c.jobs.trending_interval_s > 0) {
    const int64_t interval_ms = int64_t{c.jobs.trending_interval_s} * 1000;
    jobs_->Every(
        {std::string(kTrendingJob), "", interval_ms, std::min<int64_t>(interval_ms, 5000), 1});
  }
}

void App::OpenWebhooks() {
  const config::Config& c = config_;
  services::JobRunnerOptions jobs;
  jobs.threads = c.webhooks.threads;
  // A delivery holds its claim at most timeout_s; the lease outlives it whatever jobs.lease_s.
  jobs.lease_ms = std::max<int64_t>(int64_t{c.jobs.lease_s}, 3 * c.webhooks.timeout_s) * 1000;
  jobs.retry_base_ms = int64_t{c.webhooks.retry_base_s} * 1000;
  jobs.changes = stores_.changes.get();
  webhook_jobs_ = std::make_unique<services::JobRunner>(*stores_.jobs, std::move(jobs));
  services::WebhookOptions o;
  for (const auto& host : ListOf(c.webhooks.allow_private_hosts)) {
    o.private_hosts.push_back(AsciiLower(host));
  }
  if (auto listen = config::ParseListen(c.server.listen); listen && listen->second != 0) {
    o.hub_addresses.push_back(*listen);
  }
  if (!c.server.public_url.empty()) {
    o.public_url = c.server.public_url;
    if (auto where = net::ParseUrlHost(c.server.public_url)) {
      o.hub_addresses.emplace_back(where->host, where->port);
    }
  }
  o.timeout_ms = int64_t{c.webhooks.timeout_s} * 1000;
  o.max_attempts = c.webhooks.max_attempts;
  o.max_per_user = c.webhooks.max_per_user;
  o.enqueue = [this](db::NewJob job) -> Result<void> {
    auto queued = webhook_jobs_->Enqueue(std::move(job));
    return queued ? Result<void>() : Result<void>(std::move(queued).error());
  };
  webhooks_ = std::make_unique<services::WebhookService>(*stores_.webhooks, *stores_.users,
                                                         *access_, *repos_, std::move(o));
  webhook_jobs_->Handle(std::string(services::kWebhookDeliverJob),
                        [this](const db::JobRecord& job, std::stop_token stop) {
                          return webhooks_->Deliver(job, stop);
                        });
  repos_->AddPushListener(
      [webhooks = webhooks_.get()](const services::RepoHandle& repo, const std::string&) {
        webhooks->AfterPush(repo);
      });
  repos_->AddChangeListener([webhooks = webhooks_.get()](const services::RepoChangeEvent& e) {
    webhooks->OnRepoChange(e);
  });
  discussions_->AddListener([webhooks = webhooks_.get()](const services::DiscussionChange& c) {
    webhooks->OnDiscussion(c);
  });
}

void App::StartJobs() {
  jobs_->Start();
  webhook_jobs_->Start();
}

void App::Listening(const std::string& host, uint16_t port) {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  webhooks_->SetHub("http://" + shown + ":" + std::to_string(port), host, port);
}

void App::OpenMirrors() {
  services::MirrorOptions options = MirrorOptionsFrom(config_);
  services::UpstreamOptions upstream_options = UpstreamOptionsFrom(config_);
  // The upstream hubs are the operator's choice: their hosts may be private ones.
  for (const auto& url : upstream_options.urls) {
    if (auto where = net::ParseUrlHost(url)) options.private_hosts.push_back(where->host);
  }
  options.enqueue = [this](std::string_view kind, std::string key, int64_t run_at_ms) {
    // The key is the payload too: a queued sync of the same repo or mirror absorbs this one.
    auto queued = jobs_->Enqueue({std::string(kind), key, key, 10, run_at_ms});
    return queued ? Result<void>() : Result<void>(std::move(queued).error());
  };
  mirrors_ = std::make_unique<services::MirrorService>(*stores_.mirrors, *stores_.lfs, *blobs_,
                                                       *repos_, *imports_, std::move(options));
  auto id_of = [](const db::JobRecord& job) { return std::strtoll(job.key.c_str(), nullptr, 10); };
  jobs_->Handle(std::string(services::kMirrorPullJob),
                [this, id_of](const db::JobRecord& job, std::stop_token stop) {
                  return mirrors_->Pull(id_of(job), stop);
                });
  jobs_->Handle(std::string(services::kMirrorPushJob),
                [this, id_of](const db::JobRecord& job, std::stop_token stop) {
                  return mirrors_->Push(id_of(job), stop);
                });
  jobs_->Handle(std::string(services::kMirrorTickJob),
                [this](const db::JobRecord&, std::stop_token) { return mirrors_->QueueDue(); });
  if (config_.mirrors.tick_s > 0) {
    const int64_t interval_ms = int64_t{config_.mirrors.tick_s} * 1000;
    jobs_->Every({std::string(services::kMirrorTickJob), "", interval_ms,
                  std::min<int64_t>(interval_ms, 5000), 1});
  }
  repos_->AddPushListener(
      [mirrors = mirrors_.get()](const services::RepoHandle& repo, const std::string&) {
        mirrors->AfterPush(repo);
      });
  if (upstream_options.urls.empty()) return;
  upstream_options.is_local_namespace = [users = stores_.users.get()](const std::string& ns) {
    auto kind = users->GetNamespaceKind(ns);
    return !kind || *kind != db::NamespaceKind::None;  // in doubt, the name is the hub's
  };
  upstream_ = std::make_unique<services::UpstreamCache>(*mirrors_, *stores_.mirrors,
                                                        std::move(upstream_options));
  repos_->SetMissingRepos(upstream_.get());
  mirrors_->SetCacheCheck([cache = upstream_.get()](const RepoId& id, const db::MirrorRecord& m) {
    return cache->StillServed(id, m);
  });
  content_->SetMissingBlobs(upstream_.get());
  lfs_->SetMissingBlobs(upstream_.get());
}

Result<void> App::RefreshTrending() {
  HANGAR_ASSIGN_OR_RETURN(int64_t changed, repos_->RefreshTrending());
  if (changed > 0) Log("trending")->info("{} repos' trending scores changed", changed);
  return {};
}

Result<int64_t> App::QueueMaintenance(const std::string& git_path,
                                      services::MaintenanceLevel level) {
  // Keyed by level and path: a full one is not absorbed by a light one queued before it.
  std::string payload = level == services::MaintenanceLevel::Light ? "light" : "full";
  return jobs_->Enqueue({std::string(kMaintainJob), payload + ":" + git_path, payload, 3, 0});
}

Result<void> App::RunMaintain(const db::JobRecord& job, std::stop_token stop) {
  const auto level =
      job.payload == "light" ? services::MaintenanceLevel::Light : services::MaintenanceLevel::Full;
  const std::string git_path = job.key.substr(job.key.find(':') + 1);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(config_.maintenance.timeout_s);
  for (;;) {
    auto report = maintenance_->Maintain(git_path, level, stop);
    if (report) {
      Log("maintenance")->info("{}: {}", git_path, report->Summary());
      return {};
    }
    if (report.error().code == ErrorCode::RepoNotFound) {
      // Deleted since it was queued: nothing left to do.
      Log("maintenance")->info("{}: gone; nothing to maintain", git_path);
      return {};
    }
    // Another maintenance of it runs (another job, `hangar admin maintain`): this one waits
    // for it rather than spending its attempts, and then runs on what it left.
    if (report.error().code != ErrorCode::Conflict || stop.stop_requested() ||
        std::chrono::steady_clock::now() >= deadline) {
      return std::move(report).error();
    }
    std::mutex mu;
    std::condition_variable_any wake;
    std::unique_lock lock(mu);
    wake.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
  }
}

Result<void> App::RunGc(std::stop_token stop) {
  HANGAR_ASSIGN_OR_RETURN(auto report, gc_->Run(false, std::nullopt, stop));
  Log("gc")->info("{}", report.Summary());
  if (!config_.maintenance.enabled || stop.stop_requested()) return {};
  HANGAR_ASSIGN_OR_RETURN(auto sweep, maintenance_->MaintainDue(stop));
  if (sweep.full || sweep.light || sweep.failed) {
    Log("maintenance")
        ->info("{} repos, {} full, {} light, {} failed{}", sweep.repos, sweep.full, sweep.light,
               sweep.failed, sweep.stopped ? " (stopped early)" : "");
  }
  return {};
}

Result<void> App::Ready() {
  if (draining_) return MakeError(ErrorCode::Unavailable, "draining: this process is stopping");
  if (auto schema = db::CheckSchemaCurrent(*stores_.pool); !schema) {
    return MakeError(ErrorCode::Unavailable, "database: " + schema.error().message);
  }
  if (auto blobs = blobs_->CheckUsable(); !blobs) {
    return MakeError(ErrorCode::Unavailable, "blob store: " + blobs.error().message);
  }
  return {};
}

http::Router& App::Router() {
  if (routes_) return routes_->router;
  routes_ = std::make_unique<Routes>();
  auto& r = routes_->router;
  r.SetAuthenticator(
      [this](const http::Request& req, const http::Route& route) -> Result<Principal> {
        // The web session signs in every page and form (forms carry the session's CSRF token,
        // web_util.h ReadForm) and the API's reads (file downloads, card images of a private
        // repo; SameSite=Lax keeps it off other sites' subresource requests). API writes have
        // no CSRF check, so they need a token.
        bool reads = req.method == http::Method::Get || req.method == http::Method::Head;
        if (!req.HasHeader("authorization") && (reads || route.api == http::ApiFamily::Html)) {
          std::string cookie = web::CookieValue(req, web::kSessionCookie);
          if (!cookie.empty()) {
            HANGAR_ASSIGN_OR_RETURN(auto session, sessions_->Find(cookie));
            if (session) return session->principal;
          }
        }
        return authenticator_->Authenticate(req.Header("authorization"));
      });
  // The router's repo gate asks the same rules the services apply again (RepoService::Open).
  // A read there is a read of what the repo shows (OpenMetadata): a gated repo's gate is
  // the content routes' own Open, before they read a body or send a byte.
  r.SetRepoAuthorizer([this](const Principal& who, RepoType type, std::string_view ns,
                             std::string_view name, Access needed) -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoId::Parse(type, ns, name));
    if (needed == Access::Read) {
      HANGAR_TRY(repos_->OpenMetadata(who, id));
    } else {
      HANGAR_TRY(repos_->Open(who, id, needed));
    }
    return {};
  });
  r.SetErrorRenderer([](http::ApiFamily api, const Error& e, const http::Request& req) {
    return api == http::ApiFamily::Html ? web::RenderErrorPage(e, req)
                                        : api::RenderError(api, e, req);
  });
  r.Add(http::Method::Get, "/healthz", http::ApiFamily::Plain, http::Requirement::Public(),
        [](http::Request&) -> Result<http::Response> { return http::Response::Text(200, "ok\n"); });
  r.Add(http::Method::Get, "/readyz", http::ApiFamily::Plain, http::Requirement::Public(),
        [this](http::Request&) -> Result<http::Response> {
          HANGAR_TRY(Ready());
          return http::Response::Text(200, "ready\n");
        });
  // Prometheus' scrape (issue 17 §4): site admins only (a scraper sends an admin's read
  // token), as it shows traffic by route.
  r.Add(http::Method::Get, "/metrics", http::ApiFamily::Plain, http::Requirement::SignedIn(),
        [this](http::Request& req) -> Result<http::Response> {
          if (!req.principal.is_admin) {
            return MakeError(ErrorCode::Forbidden, "/metrics is for site administrators");
          }
          http::Response res = http::Response::Text(200, metrics_.Render());
          res.SetHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
          return res;
        });
  AddScrapeHooks();
  services::DownloadCounter::Options counting;
  counting.after_flush = [repos = repos_.get()] { repos->InvalidateAll(); };
  routes_->downloads = std::make_unique<services::DownloadCounter>(*stores_.repos, counting);
  routes_->hf = std::make_unique<api::HfDeps>(
      api::HfDeps{*authenticator_, *repos_, *content_, *commits_, config_, routes_->downloads.get(),
                  (fs::path(config_.storage.data_dir) / "tmp").string()});
  // Literal prefixes first; the /{ns}/{name}/... patterns last (first match wins).
  // Before the OCI registry's /v2/{rest*}, which would take OIP's /v2/models/… paths.
  api::AddGatewayProxyRoutes(r, *gateway_proxy_);
  api::AddOciRoutes(r, *oci_, *oci_auth_);
  api::AddRegistryRoutes(r, *model_registry_);
  api::AddGatewayRoutes(r, *gateway_);
  if (viewer_) api::AddViewerRoutes(r, *viewer_);
  api::AddHfApiRoutes(r, *routes_->hf);
  api::AddUploadRoutes(r, *uploads_, config_.limits);
  api::AddSshKeyRoutes(r, *ssh_keys_);
  api::AddMirrorRoutes(r, *mirrors_);
  api::AddUpstreamTokenRoutes(r, upstream_.get());
  api::AddGateRoutes(r, *gates_);
  api::AddSocialRoutes(r, *social_);
  api::AddDiscussionRoutes(r, *discussions_);
  api::AddCollectionRoutes(r, *collections_);
  api::AddStorageRoutes(r, *storage_);
  api::AddWebhookRoutes(r, *webhooks_);
  api::AddLfsRoutes(r, *lfs_, config_.limits);
  api::AddGitRoutes(r, *git_);
  api::AddHfFileRoutes(r, *routes_->hf);
  routes_->page_caches = std::make_unique<web::PageCaches>();
  routes_->web = std::make_unique<web::WebDeps>(web::WebDeps{
      *authenticator_, *access_, *sessions_, *repos_, *content_, *imports_, *accounts_, config_,
      *routes_->page_caches, viewer_.get(), model_registry_.get(), ssh_keys_.get(), mirrors_.get(),
      upstream_.get(), gates_.get(), discussions_.get(), social_.get(), collections_.get()});
  web::AddWebRoutes(r, *routes_->web);
  std::vector<std::string> patterns;
  for (const auto& route : r.Routes()) patterns.push_back(route.pattern);
  http_metrics_ = std::make_unique<metrics::HttpMetrics>(metrics_, std::move(patterns));
  return r;
}

void App::AddScrapeHooks() {
  auto& db_open = metrics::Gauge(metrics_, "hangar_db_connections_open",
                                 "Database connections the pool holds open now");
  auto& db_max = metrics::Gauge(metrics_, "hangar_db_connections_max",
                                "The pool's bound (database.max_connections)");
  auto& git_fetches = metrics::Gauge(metrics_, "hangar_git_fetches_running",
                                     "git upload-packs (clones, fetches) running now");
  auto& git_pushes = metrics::Gauge(metrics_, "hangar_git_pushes_running",
                                    "git receive-packs (pushes) running now");
  auto& git_queued = metrics::Gauge(metrics_, "hangar_git_queue_length",
                                    "git operations waiting for a slot (limits.pack_queue)");
  auto& jobs_queued = metrics::Gauge(metrics_, "hangar_jobs_queued",
                                     "Jobs waiting in the queue (due or not yet), all processes");
  auto& jobs_running = metrics::Gauge(metrics_, "hangar_jobs_running",
                                      "Jobs running now under a live lease, all processes");
  auto& jobs_dead = metrics::Gauge(metrics_, "hangar_jobs_dead",
                                   "Jobs that spent their attempts (hangar admin jobs list)");
  metrics_.OnScrape([&, this] {
    if (auto counts = stores_.jobs->Counts(NowUnixMillis())) {
      jobs_queued.Set(static_cast<double>(counts->queued));
      jobs_running.Set(static_cast<double>(counts->running));
      jobs_dead.Set(static_cast<double>(counts->dead));
    }
    db_open.Set(stores_.pool->OpenCount());
    db_max.Set(stores_.pool->MaxConnections());
    auto git = git_->admission().Snapshot();
    git_fetches.Set(git.fetches);
    git_pushes.Set(git.pushes);
    git_queued.Set(git.queued);
  });
}

}  // namespace hangar::cli

// hangar: the single binary. `serve` runs the hub; `worker` runs queued jobs; `admin`
// manages users, tokens and orgs directly in the data dir, whether or not a server is
// running (issue #2 CLI contract).

#include <CLI/CLI.hpp>

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string_view>

#include "api/git/git_daemon.h"
#include "api/git/serv_socket.h"
#include "cli/admin_commands.h"
#include "cli/app.h"
#include "cli/cli_util.h"
#include "cli/client_commands.h"
#include "cli/import_command.h"
#include "cli/maintain_command.h"
#include "cli/oci_command.h"
#include "cli/ssh_commands.h"
#include "core/log.h"
#include "http/server.h"
#include "net/otlp_exporter.h"

namespace hangar::cli {
namespace {

struct CommonFlags {
  std::string config_file;
  std::string data_dir;
};

// The server span of `req`, answered with `status` after `seconds` (OTLP export).
net::Span SpanOf(const http::Request& req, const http::Router& router, int status, double seconds) {
  net::Span s;
  s.trace_id = req.trace.trace_id;
  s.span_id = req.trace.span_id;
  s.parent_id = req.trace.parent_id;
  const auto& routes = router.Routes();
  const bool matched = req.route_index >= 0 && static_cast<size_t>(req.route_index) < routes.size();
  // Named by the route's pattern, never the path: paths carry names, and LFS tickets.
  const std::string route = matched ? routes[static_cast<size_t>(req.route_index)].pattern : "";
  s.name = std::string(http::MethodName(req.method)) + (matched ? " " + route : "");
  const auto end = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  s.end_ns = static_cast<uint64_t>(end);
  s.start_ns = s.end_ns - static_cast<uint64_t>(seconds * 1e9);
  s.error = status >= 500;
  s.string_attributes = {{"http.request.method", std::string(http::MethodName(req.method))},
                         {"hangar.request_id", req.request_id}};
  if (matched) s.string_attributes.emplace_back("http.route", route);
  s.int_attributes = {{"http.response.status_code", status}};
  return s;
}

Result<config::Config> Load(const CommonFlags& f,
                            std::vector<std::pair<std::string, std::string>> overrides) {
  config::LoadOptions opts;
  if (!f.config_file.empty()) opts.config_file = f.config_file;
  if (!f.data_dir.empty()) overrides.insert(overrides.begin(), {"storage.data_dir", f.data_dir});
  opts.overrides = std::move(overrides);
  return config::LoadConfig(opts);
}

int Serve(const CommonFlags& f, const std::string& listen, const std::string& public_url,
          const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const auto& s : sets) {
    auto kv = config::ParseOverride(s);
    if (!kv) return Fail(kv.error());
    overrides.push_back(std::move(*kv));
  }
  if (!listen.empty()) overrides.emplace_back("server.listen", listen);
  if (!public_url.empty()) overrides.emplace_back("server.public_url", public_url);
  auto cfg = Load(f, overrides);
  if (!cfg) return Fail(cfg.error());
  SetLogLevel(cfg->log.level);
  auto app = App::Open(*cfg);
  if (!app) return Fail(app.error());
  // The viewer's engines and export queue serve requests only: admin commands skip them.
  if (cfg->viewer.enabled) {
    if (auto opened = (*app)->OpenViewer(); !opened) return Fail(opened.error());
  }
  auto hp = config::ParseListen(cfg->server.listen);
  if (!hp) return Fail(hp.error());
  http::ServerOptions so;
  so.host = hp->first;
  so.port = hp->second;
  so.io_threads = cfg->server.threads;
  so.worker_threads = cfg->server.worker_threads;
  so.public_url = cfg->server.public_url;
  so.max_header_bytes = static_cast<size_t>(cfg->server.max_header_bytes);
  so.idle_timeout = std::chrono::seconds(cfg->server.idle_timeout_s);
  so.shutdown_grace = std::chrono::seconds(cfg->server.shutdown_grace_s);
  so.drain_delay = std::chrono::milliseconds(cfg->server.drain_delay_ms);

  const config::LimitsConfig& lim = cfg->limits;
  so.body_buffer_bytes = static_cast<size_t>(lim.body_buffer_bytes);
  so.body_memory_bytes = static_cast<uint64_t>(lim.body_memory_bytes);
  so.body_memory_wait = std::chrono::seconds(lim.body_memory_wait_s);
  so.min_body_rate = static_cast<uint64_t>(lim.min_body_rate);
  so.body_rate_window = std::chrono::seconds(lim.body_rate_window_s);
  so.body_time_limit = std::chrono::seconds(lim.body_time_limit_s);
  so.connections_per_ip = lim.connections_per_ip;
  so.anonymous_bodies_per_ip = lim.anonymous_bodies_per_ip;
  so.bodies_per_principal = lim.bodies_per_principal;
  so.streaming_bodies = lim.streaming_bodies;
  so.handler_memory_bytes = static_cast<uint64_t>(lim.handler_memory_bytes);
  so.handler_memory_wait = std::chrono::seconds(lim.handler_memory_wait_s);
  so.access_log = cfg->log.access_log;
  http::Router& router = (*app)->Router();
  so.on_drain = [hub = app->get()] { hub->BeginDrain(); };
  so.access_log_json = cfg->log.access_format == "json";
  // Each request's span to the collector (log.otlp_endpoint), named by its route.
  std::unique_ptr<net::SpanExporter> spans;
  if (!cfg->log.otlp_endpoint.empty()) {
    spans = std::make_unique<net::SpanExporter>(net::SpanExporterOptions{
        .endpoint = cfg->log.otlp_endpoint, .service_name = cfg->log.service_name});
  }
  metrics::HttpMetrics* counts = (*app)->http_metrics();
  so.on_request = [counts] { counts->Started(); };
  so.on_answered = [counts, exporter = spans.get(), &router](const http::Request& req, int status,
                                                             double seconds) {
    counts->Answered(req.route_index, static_cast<int>(req.method), status, seconds);
    if (exporter && req.trace.sampled) exporter->Add(SpanOf(req, router, status, seconds));
  };
  http::Server server(so, router);
  auto port = server.Listen();
  if (!port) return Fail(port.error());
  (*app)->Listening(so.host, static_cast<uint16_t>(*port));
  // Git over SSH (sshd's `hangar serv` reaches this socket) and git://, on the same git
  // budget as HTTP (docs/ssh.md).
  std::unique_ptr<api::ServSocket> serv_socket;
  if (cfg->ssh.enabled) {
    api::ServSocketOptions o;
    o.path = cfg->ssh.socket;
    o.max_sessions = cfg->ssh.max_sessions;
    o.public_url =
        !cfg->server.public_url.empty()
            ? cfg->server.public_url
            : "http://" + (so.host.find(':') != std::string::npos ? "[" + so.host + "]" : so.host) +
                  ":" + std::to_string(*port);
    o.credential_key = (*app)->secret();
    serv_socket = std::make_unique<api::ServSocket>(o, (*app)->git(), (*app)->ssh_keys());
    if (auto started = serv_socket->Start(); !started) return Fail(started.error());
  }
  std::unique_ptr<api::GitDaemon> git_daemon;
  if (!cfg->git_daemon.listen.empty()) {
    auto daemon_at = config::ParseListen(cfg->git_daemon.listen);
    if (!daemon_at) return Fail(daemon_at.error());
    api::GitDaemonOptions o;
    o.host = daemon_at->first;
    o.port = daemon_at->second;
    o.max_connections = cfg->git_daemon.max_connections;
    git_daemon = std::make_unique<api::GitDaemon>(o, (*app)->git());
    if (auto started = git_daemon->Start(); !started) return Fail(started.error());
  }
  // The job queue's runner (garbage collection, maintenance, ...), unless workers do it;
  // stopped (its running jobs handed back) when the App goes after the server drained.
  if (cfg->jobs.in_process) (*app)->StartJobs();
  // Exports a stopped process left unfinished run again (docs/viewer.md).
  if (auto* viewer = (*app)->viewer()) viewer->ResumeUnfinished();
  std::string host = so.host.find(':') != std::string::npos ? "[" + so.host + "]" : so.host;
  server.Run([&] {
    std::printf("listening on http://%s:%u\n", host.c_str(), static_cast<unsigned>(*port));
    // After the line tests and scripts wait for: where git:// listens (port 0: any).
    if (git_daemon) std::printf("git:// on port %u\n", static_cast<unsigned>(git_daemon->port()));
    std::fflush(stdout);
    Log("http")->info("listening on http://{}:{} (data dir {})", host, *port,
                      cfg->storage.data_dir);
  });
  if (git_daemon) git_daemon->Stop();
  if (serv_socket) serv_socket->Stop();
  Log("http")->info("stopped");
  return 0;
}

// `hangar worker`: runs the job queue's runner alone (no HTTP) until SIGTERM or SIGINT,
// then hands its running jobs back and exits 0 (issue 17 §3, docs/deploy.md).
int Worker(const CommonFlags& f) {
  auto cfg = Load(f, {});
  if (!cfg) return Fail(cfg.error());
  SetLogLevel(cfg->log.level);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  // Blocked before any thread starts, so every thread inherits the mask and sigwait below
  // is the one to see them.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto app = App::Open(*cfg);
  if (!app) return Fail(app.error());
  (*app)->StartJobs();
  std::printf("worker running (%d job threads)\n", cfg->jobs.threads);
  std::fflush(stdout);
  Log("jobs")->info("worker running ({} job threads, data dir {})", cfg->jobs.threads,
                    cfg->storage.data_dir);
  int sig = 0;
  sigwait(&signals, &sig);
  Log("jobs")->info("worker stopping (signal {})", sig);
  (*app)->jobs().Stop();
  return 0;
}

}  // namespace
}  // namespace hangar::cli

int main(int argc, char** argv) {
  using namespace hangar;
  using namespace hangar::cli;
  std::signal(SIGPIPE, SIG_IGN);  // a client hanging up must never kill the server
  CLI::App app{"Hangar: a self-hosted hub for models and datasets"};
  app.set_version_flag("--version", std::string("hangar ") + HANGAR_VERSION);
  app.require_subcommand(1);
  CommonFlags common;
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--config", common.config_file, "TOML config file");
    sub->add_option("--data-dir", common.data_dir, "data directory (default ./hangar-data)");
  };

  std::string listen, public_url;
  std::vector<std::string> sets;
  auto* serve = app.add_subcommand("serve", "run the hub");
  add_common(serve);
  serve->add_option("--listen", listen, "HOST:PORT to listen on (default 127.0.0.1:8080)");
  serve->add_option("--public-url", public_url, "base URL clients use, for absolute URLs");
  serve->add_option("--set", sets, "set any config key: --set limits.pack_queue=64 (repeatable)");

  auto* worker =
      app.add_subcommand("worker", "run queued jobs (gc, maintenance, ...) without serving");
  add_common(worker);

  auto* admin =
      app.add_subcommand("admin", "manage users, tokens and orgs; collect garbage; maintain repos");
  admin->require_subcommand(1);
  std::optional<int> client_rc;  // upload / download run inside the parse (client_commands.h)
  AddClientCommands(app, &client_rc);
  AddImportCommand(app, &client_rc);       // runs inside the parse too
  AddOciCommands(app, &client_rc);         // `hangar oci push/pull`, likewise
  AddSshCommands(app, &client_rc);         // `hangar keys` and `hangar serv`, likewise
  AddAdminCommands(*admin, &client_rc);    // user, token, org, gc: likewise
  AddMaintainCommand(*admin, &client_rc);  // `hangar admin maintain`, likewise

  CLI11_PARSE(app, argc, argv);

  if (client_rc) return *client_rc;
  if (serve->parsed()) return Serve(common, listen, public_url, sets);
  if (worker->parsed()) return Worker(common);
  return 2;
}

// hangar: the single binary. `serve` runs the hub; `admin` manages users, tokens and orgs
// directly in the data dir, whether or not a server is running (issue #2 CLI contract).

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string_view>

#include "cli/app.h"
#include "cli/client_commands.h"
#include "cli/import_command.h"
#include "cli/maintain_command.h"
#include "cli/oci_command.h"
#include "core/log.h"
#include "http/server.h"

namespace hangar::cli {
namespace {

struct CommonFlags {
  std::string config_file;
  std::string data_dir;
};

Result<config::Config> Load(const CommonFlags& f,
                            std::vector<std::pair<std::string, std::string>> overrides) {
  config::LoadOptions opts;
  if (!f.config_file.empty()) opts.config_file = f.config_file;
  if (!f.data_dir.empty()) overrides.insert(overrides.begin(), {"storage.data_dir", f.data_dir});
  opts.overrides = std::move(overrides);
  return config::LoadConfig(opts);
}

int Fail(const Error& e) {
  std::fprintf(stderr, "hangar: %s\n", e.message.c_str());
  return Describe(e.code).http_status >= 500 ? 1 : 2;
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
  http::Server server(so, (*app)->Router());
  auto port = server.Listen();
  if (!port) return Fail(port.error());
  // Background garbage collection on a thread of its own; stopped (mid-run if need be)
  // when `gc_loop` goes out of scope after the server drained.
  std::optional<services::GcLoop> gc_loop;
  if (cfg->gc.interval_s > 0) {
    // Each collection is followed by the maintenance of repos that need it.
    gc_loop.emplace((*app)->gc(), std::chrono::seconds(cfg->gc.interval_s),
                    std::chrono::seconds(60),
                    cfg->maintenance.enabled ? &(*app)->maintenance() : nullptr);
  }
  std::string host = so.host.find(':') != std::string::npos ? "[" + so.host + "]" : so.host;
  server.Run([&] {
    std::printf("listening on http://%s:%u\n", host.c_str(), static_cast<unsigned>(*port));
    std::fflush(stdout);
    Log("http")->info("listening on http://{}:{} (data dir {})", host, *port,
                      cfg->storage.data_dir);
  });
  Log("http")->info("stopped");
  return 0;
}

// A JSON string literal for `s` (GC items are hex names and file names).
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `hangar admin gc`: runs one collection and prints its report (docs/gc.md).
int Gc(App& hub, bool dry_run, std::optional<int64_t> grace_s, bool json) {
  std::optional<std::chrono::seconds> grace;
  if (grace_s) grace = std::chrono::seconds(*grace_s);
  auto r = hub.gc().Run(dry_run, grace);
  if (!r) return Fail(r.error());
  if (json) {
    auto count = [](const services::GcCount& c) {
      return "{\"count\":" + std::to_string(c.count) + ",\"bytes\":" + std::to_string(c.bytes) +
             "}";
    };
    std::string out = "{\"dry_run\":" + std::string(r->dry_run ? "true" : "false") +
                      ",\"grace_s\":" + std::to_string(r->grace.count()) +
                      ",\"blobs\":" + count(r->blobs) +
                      ",\"expired_uploads\":" + count(r->expired_uploads) +
                      ",\"orphan_staging\":" + count(r->orphan_staging) +
                      ",\"tmp_files\":" + count(r->tmp_files) +
                      ",\"multipart_dirs\":" + count(r->multipart_dirs) +
                      ",\"blobs_referenced\":" + std::to_string(r->blobs_referenced) +
                      ",\"blobs_in_grace\":" + std::to_string(r->blobs_in_grace) + ",\"items\":[";
    for (size_t i = 0; i < r->items.size(); ++i) {
      out += (i ? "," : "") + JsonString(r->items[i]);
    }
    out += "],\"unlisted\":" + std::to_string(r->unlisted) + "}";
    std::printf("%s\n", out.c_str());
    return 0;
  }
  if (r->dry_run) {
    std::printf("dry run: nothing was removed; these would go:\n");
    for (const auto& item : r->items) std::printf("  %s\n", item.c_str());
    if (r->unlisted) {
      std::printf("  … and %llu more\n", static_cast<unsigned long long>(r->unlisted));
    }
    if (r->items.empty()) std::printf("  (nothing)\n");
  }
  std::printf("%s\n", r->Summary().c_str());
  return 0;
}

std::optional<std::string> ReadPasswordStdin() {
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
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

  auto* admin =
      app.add_subcommand("admin", "manage users, tokens and orgs; collect garbage; maintain repos");
  admin->require_subcommand(1);
  auto* user = admin->add_subcommand("user", "users")->require_subcommand(1);
  auto* user_create = user->add_subcommand("create", "create a user");
  std::string name, email, token_name = "cli", role = "write", owner, org, member;
  bool is_admin = false, password_stdin = false;
  add_common(user_create);
  user_create->add_option("NAME", name)->required();
  user_create->add_option("--email", email);
  user_create->add_flag("--admin", is_admin, "site administrator");
  user_create->add_flag("--password-stdin", password_stdin, "read a password from stdin");

  auto* token = admin->add_subcommand("token", "access tokens")->require_subcommand(1);
  auto* token_create = token->add_subcommand("create", "issue a token; prints only the token");
  add_common(token_create);
  token_create->add_option("USER", name)->required();
  token_create->add_option("--name", token_name);
  token_create->add_option("--role", role)->check(CLI::IsMember({"read", "write"}));
  auto* token_revoke = token->add_subcommand("revoke", "revoke a token by id");
  int64_t token_id = 0;
  add_common(token_revoke);
  token_revoke->add_option("USER", name)->required();
  token_revoke->add_option("ID", token_id)->required();
  auto* token_list = token->add_subcommand("list", "list a user's tokens");
  add_common(token_list);
  token_list->add_option("USER", name)->required();

  auto* orgc = admin->add_subcommand("org", "organizations")->require_subcommand(1);
  auto* org_create = orgc->add_subcommand("create", "create an org");
  add_common(org_create);
  org_create->add_option("NAME", org)->required();
  org_create->add_option("--owner", owner)->required();
  auto* org_add = orgc->add_subcommand("add-member", "add a member or change their role");
  add_common(org_add);
  org_add->add_option("ORG", org)->required();
  org_add->add_option("USER", member)->required();
  org_add->add_option("--role", role)->required()->check(CLI::IsMember({"read", "write", "admin"}));

  std::optional<int> client_rc;  // upload / download run inside the parse (client_commands.h)
  AddClientCommands(app, &client_rc);
  AddImportCommand(app, &client_rc);       // runs inside the parse too
  AddOciCommands(app, &client_rc);         // `hangar oci push/pull`, likewise
  AddMaintainCommand(*admin, &client_rc);  // `hangar admin maintain`, likewise

  auto* gc = admin->add_subcommand(
      "gc", "remove unreferenced blobs, expired uploads and stray temporaries (docs/gc.md)");
  add_common(gc);
  bool gc_dry_run = false, gc_json = false;
  std::optional<int64_t> gc_grace;
  gc->add_flag("--dry-run", gc_dry_run, "list what would be removed; remove nothing");
  gc->add_option("--grace", gc_grace,
                 "seconds things must sit untouched before they go (default gc.grace_s); "
                 "0 is only safe on a hub nobody writes to")
      ->check(CLI::Range(int64_t{0}, int64_t{2147483647}));
  gc->add_flag("--json", gc_json, "print the report as JSON");

  CLI11_PARSE(app, argc, argv);

  if (client_rc) return *client_rc;
  if (serve->parsed()) return Serve(common, listen, public_url, sets);

  SetLogLevel("warn");
  auto hub = App::OpenFor(common.config_file, common.data_dir);
  if (!hub) return Fail(hub.error());
  auto& auth = (*hub)->auth();

  if (user_create->parsed()) {
    std::optional<std::string> password;
    if (password_stdin) {
      password = ReadPasswordStdin();
      if (!password) return Fail(MakeError(ErrorCode::BadRequest, "no password on stdin"));
    }
    auto u = password ? auth.CreateUser(name, email, is_admin, std::string_view(*password))
                      : auth.CreateUser(name, email, is_admin);
    if (!u) return Fail(u.error());
    std::fprintf(stderr, "created user %s\n", u->name.c_str());
    return 0;
  }
  if (token_create->parsed()) {
    auto t =
        auth.CreateToken(name, token_name, role == "read" ? TokenRole::Read : TokenRole::Write);
    if (!t) return Fail(t.error());
    std::printf("%s\n", t->token.c_str());
    return 0;
  }
  if (token_revoke->parsed()) {
    auto r = auth.RevokeToken(name, token_id);
    if (!r) return Fail(r.error());
    std::fprintf(stderr, "revoked token %lld of %s\n", static_cast<long long>(token_id),
                 name.c_str());
    return 0;
  }
  if (token_list->parsed()) {
    auto list = auth.ListTokens(name);
    if (!list) return Fail(list.error());
    for (const auto& t : *list) {
      std::printf("%lld\t%s\t%s\n", static_cast<long long>(t.id), t.name.c_str(),
                  std::string(db::TokenRoleName(t.role)).c_str());
    }
    return 0;
  }
  if (org_create->parsed()) {
    auto o = auth.CreateOrg(org, owner);
    if (!o) return Fail(o.error());
    std::fprintf(stderr, "created org %s (admin: %s)\n", org.c_str(), owner.c_str());
    return 0;
  }
  if (gc->parsed()) return Gc(**hub, gc_dry_run, gc_grace, gc_json);
  if (org_add->parsed()) {
    auto r = auth.AddMember(org, member, *db::ParseOrgRole(role));
    if (!r) return Fail(r.error());
    std::fprintf(stderr, "%s is now %s of %s\n", member.c_str(), role.c_str(), org.c_str());
    return 0;
  }
  return 2;
}

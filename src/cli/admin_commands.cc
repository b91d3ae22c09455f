#include "cli/admin_commands.h"

#include <boost/json.hpp>

#include <charconv>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "cli/app.h"
#include "cli/cli_util.h"
#include "core/log.h"

namespace hangar::cli {
namespace {

namespace json = boost::json;

struct AdminFlags {
  std::string config_file, data_dir;
  std::string name, email, token_name = "cli", role = "write", owner, org, member;
  bool is_admin = false, password_stdin = false;
  int64_t token_id = 0;
  bool gc_dry_run = false, gc_json = false;
  std::string job_state = "dead";
  std::string job_id;  // parsed strictly by RetryJob
  std::optional<int64_t> gc_grace;
};

std::optional<std::string> ReadPasswordStdin() {
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

int CreateUser(App& hub, const AdminFlags& f) {
  std::optional<std::string> password;
  if (f.password_stdin) {
    password = ReadPasswordStdin();
    if (!password) return Fail(MakeError(ErrorCode::BadRequest, "no password on stdin"));
  }
  auto& accounts = hub.accounts();
  auto u = password ? accounts.CreateUser(f.name, f.email, f.is_admin, std::string_view(*password))
                    : accounts.CreateUser(f.name, f.email, f.is_admin);
  if (!u) return Fail(u.error());
  std::fprintf(stderr, "created user %s\n", u->name.c_str());
  return 0;
}

int CreateToken(App& hub, const AdminFlags& f) {
  auto t = hub.authenticator().CreateToken(f.name, f.token_name,
                                           f.role == "read" ? TokenRole::Read : TokenRole::Write);
  if (!t) return Fail(t.error());
  std::printf("%s\n", t->token.c_str());
  return 0;
}

int RevokeToken(App& hub, const AdminFlags& f) {
  auto r = hub.authenticator().RevokeToken(f.name, f.token_id);
  if (!r) return Fail(r.error());
  std::fprintf(stderr, "revoked token %lld of %s\n", static_cast<long long>(f.token_id),
               f.name.c_str());
  return 0;
}

int ListTokens(App& hub, const AdminFlags& f) {
  auto list = hub.authenticator().ListTokens(f.name);
  if (!list) return Fail(list.error());
  for (const auto& t : *list) {
    std::printf("%lld\t%s\t%s\n", static_cast<long long>(t.id), t.name.c_str(),
                std::string(db::TokenRoleName(t.role)).c_str());
  }
  return 0;
}

int CreateOrg(App& hub, const AdminFlags& f) {
  auto o = hub.accounts().CreateOrg(f.org, f.owner);
  if (!o) return Fail(o.error());
  std::fprintf(stderr, "created org %s (admin: %s)\n", f.org.c_str(), f.owner.c_str());
  return 0;
}

int AddMember(App& hub, const AdminFlags& f) {
  auto r = hub.accounts().AddMember(f.org, f.member, *db::ParseOrgRole(f.role));
  if (!r) return Fail(r.error());
  std::fprintf(stderr, "%s is now %s of %s\n", f.member.c_str(), f.role.c_str(), f.org.c_str());
  return 0;
}

// `hangar admin gc`: runs one collection and prints its report (docs/gc.md).
int Gc(App& hub, const AdminFlags& f) {
  std::optional<std::chrono::seconds> grace;
  if (f.gc_grace) grace = std::chrono::seconds(*f.gc_grace);
  auto r = hub.gc().Run(f.gc_dry_run, grace);
  if (!r) return Fail(r.error());
  if (f.gc_json) {
    auto count = [](const services::GcCount& c) {
      return json::object{{"count", c.count}, {"bytes", c.bytes}};
    };
    json::array items;
    for (const auto& item : r->items) items.emplace_back(item);
    json::object out{{"dry_run", r->dry_run},
                     {"grace_s", r->grace.count()},
                     {"blobs", count(r->blobs)},
                     {"expired_uploads", count(r->expired_uploads)},
                     {"orphan_staging", count(r->orphan_staging)},
                     {"tmp_files", count(r->tmp_files)},
                     {"blobs_referenced", r->blobs_referenced},
                     {"blobs_in_grace", r->blobs_in_grace},
                     {"items", std::move(items)},
                     {"unlisted", r->unlisted}};
    std::printf("%s\n", json::serialize(out).c_str());
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

// `hangar admin jobs list`: one line a job, tab-separated: id, kind, key, state,
// attempts/max, last error.
int ListJobs(App& hub, const AdminFlags& f) {
  db::JobState state = db::JobState::Dead;
  for (auto s :
       {db::JobState::Queued, db::JobState::Running, db::JobState::Done, db::JobState::Dead}) {
    if (db::JobStateName(s) == f.job_state) state = s;
  }
  auto jobs = hub.jobs().List(state, 1000);
  if (!jobs) return Fail(jobs.error());
  for (const auto& j : *jobs) {
    std::printf("%lld\t%s\t%s\t%s\t%d/%d\t%s\n", static_cast<long long>(j.id), j.kind.c_str(),
                j.key.c_str(), std::string(db::JobStateName(j.state)).c_str(), j.attempts,
                j.max_attempts, j.last_error.c_str());
  }
  return 0;
}

int RetryJob(App& hub, const AdminFlags& f) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(f.job_id.data(), f.job_id.data() + f.job_id.size(), id);
  if (f.job_id.empty() || ec != std::errc() || end != f.job_id.data() + f.job_id.size() ||
      id <= 0) {
    return Fail(MakeError(ErrorCode::BadRequest,
                          "a job id is a positive decimal number, not '" + f.job_id + "'"));
  }
  if (auto r = hub.jobs().Retry(id); !r) return Fail(r.error());
  std::fprintf(stderr, "job %lld queued again\n", static_cast<long long>(id));
  return 0;
}

}  // namespace

void AddAdminCommands(CLI::App& admin, std::optional<int>* exit_code) {
  auto f = std::make_shared<AdminFlags>();
  // Each command opens the data dir when it runs, quietly, then does its one thing.
  auto add = [&](CLI::App* sub, int (*run)(App&, const AdminFlags&)) {
    sub->add_option("--config", f->config_file, "TOML config file");
    sub->add_option("--data-dir", f->data_dir, "data directory (default ./hangar-data)");
    sub->callback([f, run, exit_code] {
      SetLogLevel("warn");
      auto hub = App::OpenFor(f->config_file, f->data_dir);
      *exit_code = hub ? run(**hub, *f) : Fail(hub.error());
    });
  };
  auto* user = admin.add_subcommand("user", "users")->require_subcommand(1);
  auto* user_create = user->add_subcommand("create", "create a user");
  user_create->add_option("NAME", f->name)->required();
  user_create->add_option("--email", f->email);
  user_create->add_flag("--admin", f->is_admin, "site administrator");
  user_create->add_flag("--password-stdin", f->password_stdin, "read a password from stdin");
  add(user_create, CreateUser);

  auto* token = admin.add_subcommand("token", "access tokens")->require_subcommand(1);
  auto* token_create = token->add_subcommand("create", "issue a token; prints only the token");
  token_create->add_option("USER", f->name)->required();
  token_create->add_option("--name", f->token_name);
  token_create->add_option("--role", f->role)->check(CLI::IsMember({"read", "write"}));
  add(token_create, CreateToken);
  auto* token_revoke = token->add_subcommand("revoke", "revoke a token by id");
  token_revoke->add_option("USER", f->name)->required();
  token_revoke->add_option("ID", f->token_id)->required();
  add(token_revoke, RevokeToken);
  auto* token_list = token->add_subcommand("list", "list a user's tokens");
  token_list->add_option("USER", f->name)->required();
  add(token_list, ListTokens);

  auto* org = admin.add_subcommand("org", "organizations")->require_subcommand(1);
  auto* org_create = org->add_subcommand("create", "create an org");
  org_create->add_option("NAME", f->org)->required();
  org_create->add_option("--owner", f->owner)->required();
  add(org_create, CreateOrg);
  auto* org_add = org->add_subcommand("add-member", "add a member or change their role");
  org_add->add_option("ORG", f->org)->required();
  org_add->add_option("USER", f->member)->required();
  org_add->add_option("--role", f->role)
      ->required()
      ->check(CLI::IsMember({"read", "write", "admin"}));
  add(org_add, AddMember);

  auto* jobs = admin.add_subcommand("jobs", "the job queue (docs/config.md [jobs])");
  jobs->require_subcommand(1);
  auto* jobs_list =
      jobs->add_subcommand("list", "list jobs: id, kind, key, state, attempts, error");
  jobs_list->add_option("--state", f->job_state, "queued, running, done or dead (default dead)")
      ->check(CLI::IsMember({"queued", "running", "done", "dead"}));
  add(jobs_list, ListJobs);
  auto* jobs_retry = jobs->add_subcommand("retry", "queue a dead job again");
  jobs_retry->add_option("ID", f->job_id)->required();
  add(jobs_retry, RetryJob);

  auto* gc = admin.add_subcommand(
      "gc", "remove unreferenced blobs, expired uploads and stray temporaries (docs/gc.md)");
  gc->add_flag("--dry-run", f->gc_dry_run, "list what would be removed; remove nothing");
  gc->add_option("--grace", f->gc_grace,
                 "seconds things must sit untouched before they go (default gc.grace_s); "
                 "0 is only safe on a hub nobody writes to")
      ->check(CLI::Range(int64_t{0}, int64_t{2147483647}));
  gc->add_flag("--json", f->gc_json, "print the report as JSON");
  add(gc, Gc);
}

}  // namespace hangar::cli

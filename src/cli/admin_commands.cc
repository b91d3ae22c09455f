#include "cli/admin_commands.h"

#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/app.h"
#include "cli/cli_util.h"
#include "core/log.h"
#include "core/util.h"

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
  // ssh-key, deploy-key: the key (a line, or a file holding it), its title, the repo.
  std::string key, key_file, key_title, key_id, repo_id, repo_type = "model";
  bool read_write = false;
};

// `text` as a positive decimal id; `what` names it in the error. Errors: BadRequest.
Result<int64_t> PositiveId(const std::string& text, std::string_view what) {
  auto id = ParseRowId(text);
  if (!id) {
    return MakeError(ErrorCode::BadRequest,
                     std::string(what) + " is a positive decimal number, not '" + text + "'");
  }
  return *id;
}

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
  auto id = PositiveId(f.job_id, "a job id");
  if (!id) return Fail(id.error());
  if (auto r = hub.jobs().Retry(*id); !r) return Fail(r.error());
  std::fprintf(stderr, "job %lld queued again\n", static_cast<long long>(*id));
  return 0;
}

// The key line of --key or of the file --key-file names (one of them). Errors: BadRequest.
Result<std::string> KeyText(const AdminFlags& f) {
  if (f.key.empty() == f.key_file.empty()) {
    return MakeError(ErrorCode::BadRequest, "give the key with --key or --key-file (one of them)");
  }
  if (!f.key.empty()) return f.key;
  std::ifstream in(f.key_file, std::ios::binary);
  if (!in) return MakeError(ErrorCode::BadRequest, "cannot read " + f.key_file);
  // A public key file is one short line; ParseSshPublicKey refuses anything over 16 KiB.
  std::string text(64 << 10, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The user `name` as a principal that may manage their keys (the admin acts for them).
Result<Principal> UserPrincipal(App& hub, const std::string& name) {
  HANGAR_ASSIGN_OR_RETURN(auto user, hub.accounts().FindUser(name));
  return Principal::User(user.id, user.name, user.is_admin, TokenRole::Write, "hangar admin");
}

// One key as a line of `hangar admin ssh-key|deploy-key list`, tab-separated: id,
// fingerprint, title, type, last use (ISO 8601 or "never"), and for deploy keys its access.
void PrintKey(const db::SshKeyRecord& k) {
  std::string line = std::to_string(k.id) + "\t" + k.fingerprint + "\t" + k.title + "\t" +
                     k.key_type + "\t" + (k.last_used_at ? Iso8601(*k.last_used_at) : "never");
  if (k.repo_id != 0) line += k.read_write ? "\tread-write" : "\tread-only";
  std::printf("%s\n", line.c_str());
}

int AddSshKey(App& hub, const AdminFlags& f) {
  auto text = KeyText(f);
  if (!text) return Fail(text.error());
  auto who = UserPrincipal(hub, f.name);
  if (!who) return Fail(who.error());
  auto key = hub.ssh_keys().AddUserKey(*who, *text, f.key_title);
  if (!key) return Fail(key.error());
  PrintKey(*key);
  return 0;
}

int ListSshKeys(App& hub, const AdminFlags& f) {
  auto who = UserPrincipal(hub, f.name);
  if (!who) return Fail(who.error());
  auto keys = hub.ssh_keys().ListUserKeys(*who);
  if (!keys) return Fail(keys.error());
  for (const auto& k : *keys) PrintKey(k);
  return 0;
}

int DeleteSshKey(App& hub, const AdminFlags& f) {
  auto id = PositiveId(f.key_id, "a key id");
  if (!id) return Fail(id.error());
  auto who = UserPrincipal(hub, f.name);
  if (!who) return Fail(who.error());
  if (auto r = hub.ssh_keys().DeleteUserKey(*who, *id); !r) return Fail(r.error());
  std::fprintf(stderr, "deleted SSH key %lld of %s\n", static_cast<long long>(*id), f.name.c_str());
  return 0;
}

// The hub's administrator acting from the command line: a site admin that may write.
Principal CliAdmin() {
  Principal p = Principal::Hub();
  p.role = TokenRole::Write;
  p.token_name = "hangar admin";
  return p;
}

// REPO (NAMESPACE/NAME) of --type. Errors: BadRequest.
Result<RepoId> RepoArg(const AdminFlags& f) {
  auto type = ParseRepoType(f.repo_type);
  if (!type) return MakeError(ErrorCode::BadRequest, "--type must be model, dataset or space");
  size_t slash = f.repo_id.find('/');
  if (slash == std::string::npos) {
    return MakeError(ErrorCode::BadRequest, "the repo must be given as NAMESPACE/NAME");
  }
  return RepoId::Parse(*type, f.repo_id.substr(0, slash), f.repo_id.substr(slash + 1));
}

// One mirror as a line of `hangar admin mirror list|sync`, tab-separated: id, direction,
// URL (password as ***), last sync (ISO 8601 or "never"), last error or "ok".
void PrintMirror(const db::MirrorRecord& m) {
  std::printf("%lld\t%s\t%s\t%s\t%s\n", static_cast<long long>(m.id),
              std::string(db::MirrorDirectionName(m.direction)).c_str(),
              services::RedactImportSource(m.url).c_str(),
              m.last_sync_at ? Iso8601(*m.last_sync_at).c_str() : "never",
              m.last_error.empty() ? "ok" : m.last_error.c_str());
}

int ListMirrors(App& hub, const AdminFlags& f) {
  auto repo = RepoArg(f);
  if (!repo) return Fail(repo.error());
  auto mirrors = hub.mirrors().List(CliAdmin(), *repo);
  if (!mirrors) return Fail(mirrors.error());
  for (const auto& m : *mirrors) PrintMirror(m);
  return 0;
}

// Syncs every mirror of the repo now, in this process (not as a job), and prints each as
// list does. Exit status 1 when one of them failed.
int SyncMirrors(App& hub, const AdminFlags& f) {
  auto repo = RepoArg(f);
  if (!repo) return Fail(repo.error());
  auto mirrors = hub.mirrors().List(CliAdmin(), *repo);
  if (!mirrors) return Fail(mirrors.error());
  if (mirrors->empty())
    return Fail(MakeError(ErrorCode::NotFound, repo->UrlPath() + " has no mirrors"));
  for (const auto& m : *mirrors) {
    auto done = m.direction == db::MirrorDirection::Pull ? hub.mirrors().Pull(m.repo_id, {})
                                                         : hub.mirrors().Push(m.id, {});
    if (!done) return Fail(done.error());
  }
  auto after = hub.mirrors().List(CliAdmin(), *repo);
  if (!after) return Fail(after.error());
  bool failed = false;
  for (const auto& m : *after) {
    PrintMirror(m);
    failed |= !m.last_error.empty();
  }
  return failed ? 1 : 0;
}

int AddDeployKey(App& hub, const AdminFlags& f) {
  auto repo = RepoArg(f);
  if (!repo) return Fail(repo.error());
  auto text = KeyText(f);
  if (!text) return Fail(text.error());
  auto key = hub.ssh_keys().AddDeployKey(CliAdmin(), *repo, *text, f.key_title, f.read_write);
  if (!key) return Fail(key.error());
  PrintKey(*key);
  return 0;
}

int ListDeployKeys(App& hub, const AdminFlags& f) {
  auto repo = RepoArg(f);
  if (!repo) return Fail(repo.error());
  auto keys = hub.ssh_keys().ListDeployKeys(CliAdmin(), *repo);
  if (!keys) return Fail(keys.error());
  for (const auto& k : *keys) PrintKey(k);
  return 0;
}

int DeleteDeployKey(App& hub, const AdminFlags& f) {
  auto repo = RepoArg(f);
  if (!repo) return Fail(repo.error());
  auto id = PositiveId(f.key_id, "a key id");
  if (!id) return Fail(id.error());
  if (auto r = hub.ssh_keys().DeleteDeployKey(CliAdmin(), *repo, *id); !r) return Fail(r.error());
  std::fprintf(stderr, "deleted deploy key %lld of %s\n", static_cast<long long>(*id),
               repo->UrlPath().c_str());
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

  // SSH keys (docs/ssh.md): `--key "ssh-ed25519 AAAA… comment"` or `--key-file id.pub`.
  auto key_source = [&](CLI::App* sub) {
    sub->add_option("--key", f->key, "the public key: one line of a .pub file");
    sub->add_option("--key-file", f->key_file, "a .pub file holding the public key");
    sub->add_option("--title", f->key_title, "a name for it (default: the key's comment)");
  };
  auto* ssh_key = admin.add_subcommand("ssh-key", "users' SSH keys (docs/ssh.md)");
  ssh_key->require_subcommand(1);
  auto* ssh_add = ssh_key->add_subcommand("add", "add a key to a user; prints it as list does");
  ssh_add->add_option("USER", f->name)->required();
  key_source(ssh_add);
  add(ssh_add, AddSshKey);
  auto* ssh_list =
      ssh_key->add_subcommand("list", "list a user's keys: id, fingerprint, title, type, last use");
  ssh_list->add_option("USER", f->name)->required();
  add(ssh_list, ListSshKeys);
  auto* ssh_delete = ssh_key->add_subcommand("delete", "delete one of a user's keys by id");
  ssh_delete->add_option("USER", f->name)->required();
  ssh_delete->add_option("ID", f->key_id)->required();
  add(ssh_delete, DeleteSshKey);

  auto* deploy_key = admin.add_subcommand("deploy-key", "repos' deploy keys (docs/ssh.md)");
  deploy_key->require_subcommand(1);
  auto repo_arg = [&](CLI::App* sub) {
    sub->add_option("REPO", f->repo_id, "NAMESPACE/NAME of the repo")->required();
    sub->add_option("--type", f->repo_type, "type of REPO: model (default), dataset or space")
        ->check(CLI::IsMember({"model", "dataset", "space"}));
  };
  auto* deploy_add =
      deploy_key->add_subcommand("add", "add a deploy key to a repo; prints it as list does");
  repo_arg(deploy_add);
  key_source(deploy_add);
  deploy_add->add_flag("--read-write", f->read_write, "the key may push (default: read-only)");
  add(deploy_add, AddDeployKey);
  auto* deploy_list = deploy_key->add_subcommand(
      "list", "list a repo's deploy keys: id, fingerprint, title, type, last use, access");
  repo_arg(deploy_list);
  add(deploy_list, ListDeployKeys);
  auto* deploy_delete = deploy_key->add_subcommand("delete", "delete a repo's deploy key by id");
  repo_arg(deploy_delete);
  deploy_delete->add_option("ID", f->key_id)->required();
  add(deploy_delete, DeleteDeployKey);

  auto* mirror = admin.add_subcommand("mirror", "repos' pull and push mirrors (docs/mirrors.md)");
  mirror->require_subcommand(1);
  auto* mirror_list = mirror->add_subcommand(
      "list", "list a repo's mirrors: id, direction, URL, last sync, last error");
  repo_arg(mirror_list);
  add(mirror_list, ListMirrors);
  auto* mirror_sync = mirror->add_subcommand(
      "sync", "sync a repo's mirrors now, here; prints them as list does (exit 1: one failed)");
  repo_arg(mirror_sync);
  add(mirror_sync, SyncMirrors);

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

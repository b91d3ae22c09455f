#include "services/webhook/webhook_service.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/log.h"
#include "core/util.h"
#include "git/history.h"
#include "net/address.h"
#include "net/http_client.h"
#include "services/git/git_source.h"

namespace hangar::services {
namespace {

namespace json = boost::json;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

constexpr const char kRepoDomain[] = "repo";
constexpr const char kDiscussionDomain[] = "discussion";
constexpr int kPayloadVersion = 3;  // the public hub's payload version

// The domain named `d`: "repo", or "discussion" (huggingface_hub's type names it
// "discussions"); none for anything else.
std::optional<std::string> ParseDomain(std::string_view d) {
  if (d == kRepoDomain) return std::string(kRepoDomain);
  if (d == kDiscussionDomain || d == "discussions") return std::string(kDiscussionDomain);
  return std::nullopt;
}

constexpr const char kSetting[] = "webhooks.allow_private_hosts";

// `ip` without an IPv4-mapped IPv6 prefix ("::ffff:127.0.0.1" → "127.0.0.1").
std::string_view Unmapped(std::string_view ip) {
  if (ip.starts_with("::ffff:") && ip.find('.') != std::string_view::npos) ip.remove_prefix(7);
  return ip;
}
bool Unspecified(std::string_view ip) {
  ip = Unmapped(ip);
  return ip == "0.0.0.0" || ip == "::";
}
bool Loopback(std::string_view ip) {
  ip = Unmapped(ip);
  return ip.starts_with("127.") || ip == "::1";
}

// The part of a delivery log's "<repo>" naming the repo: "models/alice/bert".
std::string LogName(const db::RepoRecord& r) {
  return std::string(RepoCollection(r.type)) + "/" + r.ns + "/" + r.name;
}

std::string DiscussionStatus(const db::DiscussionRecord& d) {
  return std::string(db::DiscussionStatusName(d.status));
}

}  // namespace

WebhookService::WebhookService(db::WebhookStore& store, db::UserStore& users, AccessPolicy& access,
                               RepoService& repos, WebhookOptions options)
    : store_(store), users_(users), access_(access), repos_(repos), options_(std::move(options)) {
  if (!options_.now_ms) options_.now_ms = NowUnixMillis;
}

int64_t WebhookService::PausedUntil(const std::string& receiver) {
  std::lock_guard lock(paused_mu_);
  auto it = paused_.find(receiver);
  if (it == paused_.end()) return 0;
  if (it->second <= Now()) {
    paused_.erase(it);
    return 0;
  }
  return it->second;
}

void WebhookService::Pause(const std::string& receiver) {
  std::lock_guard lock(paused_mu_);
  // Bounded: a process that saw many dead receivers forgets the oldest pauses first.
  if (paused_.size() >= 10000) paused_.erase(paused_.begin());
  paused_[receiver] = Now() + kPauseMs;
}

void WebhookService::SetHub(const std::string& base_url, const std::string& host, uint16_t port) {
  if (options_.public_url.empty()) options_.public_url = base_url;
  options_.hub_addresses.emplace_back(host, port);
}

Result<void> WebhookService::CheckOwner(const Principal& who, bool write) {
  if (who.anonymous || who.user_id == 0) {
    return MakeError(ErrorCode::Unauthorized, "sign in to manage webhooks");
  }
  if (who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a key bound to one repo cannot manage webhooks");
  }
  if (write && !who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden, "token '" + who.token_name + "' is read-only");
  }
  return {};
}

Result<db::WebhookRecord> WebhookService::Own(const Principal& who, const std::string& id,
                                              bool write) {
  HANGAR_TRY(CheckOwner(who, write));
  auto w = store_.Get(id);
  // Another user's webhook is answered as missing: its id tells nothing.
  if (!w && w.error().code != ErrorCode::NotFound) return std::move(w).error();
  if (!w || w->owner_id != who.user_id) {
    return MakeError(ErrorCode::NotFound, "webhook '" + id.substr(0, 64) + "' not found");
  }
  return w;
}

Result<std::vector<db::WebhookRecord>> WebhookService::List(const Principal& who) {
  HANGAR_TRY(CheckOwner(who, false));
  return store_.ListByOwner(who.user_id);
}

Result<db::WebhookRecord> WebhookService::Get(const Principal& who, const std::string& id) {
  return Own(who, id, false);
}

Result<void> WebhookService::CheckMayChange(const Principal& who, const std::string& id) {
  HANGAR_TRY(Own(who, id, true));
  return {};
}

Result<void> WebhookService::CheckUrl(const std::string& url) {
  if (url.empty()) return Bad("'url' is empty");
  if (url.size() > kMaxWebhookUrl) {
    return Bad("'url' is over " + std::to_string(kMaxWebhookUrl) + " bytes");
  }
  const std::string scheme = AsciiLower(url.substr(0, url.find(':')));
  if (scheme != "http" && scheme != "https") {
    return Bad("'url' must be an http:// or https:// URL");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return Bad("'url' holds a space or a control character");
    }
  }
  auto where = net::ParseUrlHost(url);
  if (!where) return Bad("'url' is not a valid URL: " + where.error().message);
  const std::string host = AsciiLower(where->host);
  auto addrs = ResolveChecked(options_.private_hosts, where->host, kSetting);
  if (!addrs) return Bad("'url': " + addrs.error().message);
  // Not this hub: a webhook on its own repos would POST to itself for every event.
  for (const auto& [hub_host, hub_port] : options_.hub_addresses) {
    if (hub_port != where->port) continue;
    const std::string hub = AsciiLower(hub_host);
    bool same = hub == host;
    auto hub_addrs = net::ResolveHost(hub);
    for (const auto& a : *addrs) {
      if (Loopback(a) || Unspecified(a) || Unspecified(hub)) same = true;
      for (const auto& h : hub_addrs ? *hub_addrs : std::vector<std::string>{}) {
        if (Unmapped(h) == Unmapped(a)) same = true;
      }
    }
    if (same) {
      return Bad("'url' points at this hub itself (" + hub_host + ":" + std::to_string(hub_port) +
                 ")");
    }
  }
  return {};
}

Result<void> WebhookService::Apply(const Principal& who, const WebhookSpec& spec,
                                   db::WebhookRecord& w) {
  if (spec.url) {
    HANGAR_TRY(CheckUrl(*spec.url));
    w.url = *spec.url;
  }
  if (spec.secret) {
    if (spec.secret->size() > kMaxWebhookSecret) {
      return Bad("'secret' is over " + std::to_string(kMaxWebhookSecret) + " bytes");
    }
    for (char c : *spec.secret) {
      // It is sent as a header value: printable ASCII only.
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
        return Bad("'secret' holds a control or non-ASCII character");
      }
    }
    w.secret = *spec.secret;
  }
  if (spec.domains) {
    std::vector<std::string> domains;
    for (const auto& d : *spec.domains) {
      auto parsed = ParseDomain(d);
      if (!parsed) {
        return Bad("'domains': '" + d.substr(0, 40) + "' is not one of: repo, discussion");
      }
      if (std::find(domains.begin(), domains.end(), *parsed) == domains.end()) {
        domains.push_back(*parsed);
      }
    }
    if (domains.empty()) return Bad("'domains' is empty: name repo, discussion or both");
    w.domains = std::move(domains);
  }
  if (spec.watched) {
    if (spec.watched->empty()) return Bad("'watched' is empty: name a repo, a user or an org");
    if (spec.watched->size() > static_cast<size_t>(options_.max_watched)) {
      return Bad("'watched' has over " + std::to_string(options_.max_watched) + " items");
    }
    std::vector<db::WebhookWatch> watched;
    for (const auto& x : *spec.watched) {
      db::WebhookWatch canonical;
      if (x.kind == "user" || x.kind == "org") {
        auto kind = users_.GetNamespaceKind(x.name);
        if (!kind) return std::move(kind).error();
        const bool want_org = x.kind == "org";
        if (*kind != (want_org ? db::NamespaceKind::Org : db::NamespaceKind::User)) {
          return Bad("'watched': " + x.kind + " '" + x.name.substr(0, 96) + "' not found");
        }
        canonical = {x.kind, x.name};
      } else if (auto type = ParseRepoType(x.kind); type && x.kind == RepoTypeName(*type)) {
        auto slash = x.name.find('/');
        if (slash == std::string::npos) {
          return Bad("'watched': a " + x.kind + "'s name is namespace/name, not '" +
                     x.name.substr(0, 96) + "'");
        }
        RepoId id{*type, x.name.substr(0, slash), x.name.substr(slash + 1)};
        auto repo = repos_.OpenMetadata(who, id);
        if (!repo) {
          // A repo the caller may not see is answered as one that does not exist.
          return Bad("'watched': " + x.kind + " '" + x.name.substr(0, 96) + "' not found");
        }
        canonical = {x.kind, repo->record.ns + "/" + repo->record.name};
      } else {
        return Bad("'watched': type '" + x.kind.substr(0, 40) +
                   "' is not one of: model, dataset, space, user, org");
      }
      if (std::find(watched.begin(), watched.end(), canonical) == watched.end()) {
        watched.push_back(std::move(canonical));
      }
    }
    w.watched = std::move(watched);
  }
  return {};
}

Result<db::WebhookRecord> WebhookService::Create(const Principal& who, const WebhookSpec& spec) {
  HANGAR_TRY(CheckOwner(who, true));
  if (!spec.url) return Bad("'url' is required (Hangar runs no jobs: 'jobSourceId' is not taken)");
  if (!spec.watched) return Bad("'watched' is required");
  db::WebhookRecord w;
  w.id = RandomHex(12);  // 24 hex digits, as the public hub's ids
  w.owner_id = who.user_id;
  w.domains = {kRepoDomain, kDiscussionDomain};
  HANGAR_TRY(Apply(who, spec, w));
  w.created_at = w.updated_at = Now();
  HANGAR_TRY(store_.Create(w, options_.max_per_user));
  return w;
}

Result<db::WebhookRecord> WebhookService::Update(const Principal& who, const std::string& id,
                                                 const WebhookSpec& spec) {
  HANGAR_ASSIGN_OR_RETURN(auto w, Own(who, id, true));
  HANGAR_TRY(Apply(who, spec, w));
  w.updated_at = Now();
  HANGAR_TRY(store_.Update(w));
  return w;
}

Result<db::WebhookRecord> WebhookService::SetDisabled(const Principal& who, const std::string& id,
                                                      bool disabled) {
  HANGAR_ASSIGN_OR_RETURN(auto w, Own(who, id, true));
  if (w.disabled == disabled) return w;
  w.disabled = disabled;
  w.updated_at = Now();
  HANGAR_TRY(store_.Update(w));
  return w;
}

Result<void> WebhookService::Delete(const Principal& who, const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(auto w, Own(who, id, true));
  HANGAR_TRY(store_.Delete(w.id));
  return {};
}

Result<std::vector<db::WebhookDelivery>> WebhookService::Deliveries(const Principal& who,
                                                                    const std::string& id,
                                                                    int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto w, Own(who, id, false));
  return store_.Deliveries(w.id, limit);
}

json::object WebhookService::RepoJson(const db::RepoRecord& repo, const std::string& head) {
  const std::string path = repo.Id().UrlPath();
  json::object o{{"type", RepoTypeName(repo.type)},
                 {"name", repo.ns + "/" + repo.name},
                 {"id", ObjectId(repo.id, '6')},
                 {"private", repo.is_private},
                 {"url", json::object{{"web", options_.public_url + "/" + path},
                                      {"api", options_.public_url + "/api/" +
                                                  std::string(RepoCollection(repo.type)) + "/" +
                                                  repo.ns + "/" + repo.name}}}};
  // The owner: the namespace's user or org.
  std::string owner = ObjectId(0, '6');
  if (auto kind = users_.GetNamespaceKind(repo.ns); kind && *kind == db::NamespaceKind::User) {
    if (auto u = users_.FindUserByName(repo.ns)) owner = ObjectId(u->id, '6');
  } else if (kind && *kind == db::NamespaceKind::Org) {
    if (auto org = users_.FindOrgByName(repo.ns)) owner = ObjectId(org->id, '7');
  }
  o["owner"] = json::object{{"id", owner}};
  if (!head.empty()) o["headSha"] = head;
  return o;
}

void WebhookService::Emit(const db::RepoRecord& repo, const std::string& domain,
                          std::string_view scope, std::string_view action, const json::object& body,
                          std::string_view also_ns) {
  db::WebhookTarget target{std::string(RepoTypeName(repo.type)), repo.ns + "/" + repo.name,
                           repo.ns};
  auto hooks = store_.Matching(target, domain);
  if (!hooks) {
    Log("services")->warn("webhooks of {}: not queued: {}", LogName(repo), hooks.error().message);
    return;
  }
  for (const auto& w : *hooks) {
    // A private repo's events go only to owners who may read it (and, for a move, its new
    // namespace: the event names it).
    if (repo.is_private) {
      auto owner = access_.ReaderOf(w.owner_id);
      if (!owner || access_.NamespaceAccess(*owner, repo.ns) < Access::Read) continue;
      if (!also_ns.empty() && access_.NamespaceAccess(*owner, also_ns) < Access::Read) continue;
    }
    json::object payload = body;
    payload["event"] = json::object{{"action", action}, {"scope", scope}};
    json::object job{{"webhook", w.id},
                     {"event", std::string(scope) + "." + std::string(action)},
                     {"repo", LogName(repo)},
                     {"body", std::move(payload)}};
    auto queued = options_.enqueue(
        {std::string(kWebhookDeliverJob), "", json::serialize(job), options_.max_attempts, 0});
    if (!queued) {
      Log("services")->warn("webhook {}: delivery not queued: {}", w.id, queued.error().message);
    }
  }
}

void WebhookService::AfterPush(const RepoHandle& repo) {
  const db::RepoRecord& r = repo.record;
  auto refs = git::ListRefs(repo.git_path);
  if (!refs) {
    Log("services")->warn("webhooks of {}: refs not read: {}", LogName(r), refs.error().message);
    return;
  }
  std::map<std::string, std::string> now;
  for (const auto& ref : *refs) now.emplace(ref.name, ref.object.Hex());
  auto seen = store_.RefHeads(r.id);
  if (!seen) {
    Log("services")->warn("webhooks of {}: {}", LogName(r), seen.error().message);
    return;
  }
  if (!*seen) {
    // Older than the record of refs: this push starts it, and is not reported.
    (void)store_.SetRefHeads(r.id, now);
    return;
  }
  // Each ref that moved is claimed with a compare-and-swap, so two pushes that see the same
  // move report it once; one that lost re-reads what the other recorded.
  json::array updated;
  auto claim = [&](const std::string& name, std::string before, const std::string& after) {
    for (int attempt = 0; attempt < 4 && before != after; ++attempt) {
      std::string current;
      auto swapped = store_.SwapRefHead(r.id, name, before, after, &current);
      if (!swapped) return;
      if (*swapped) {
        updated.push_back(
            json::object{{"ref", name},
                         {"oldSha", before.empty() ? json::value(nullptr) : json::value(before)},
                         {"newSha", after.empty() ? json::value(nullptr) : json::value(after)}});
        return;
      }
      before = std::move(current);
    }
  };
  for (const auto& [name, oid] : now) {
    auto it = (*seen)->find(name);
    claim(name, it == (*seen)->end() ? "" : it->second, oid);
  }
  for (const auto& [name, oid] : **seen) {
    if (!now.contains(name)) claim(name, oid, "");
  }
  if (updated.empty()) return;
  std::string head;
  if (auto it = now.find("refs/heads/" + r.default_branch); it != now.end()) head = it->second;
  json::object body{{"repo", RepoJson(r, head)}, {"updatedRefs", std::move(updated)}};
  Emit(r, kRepoDomain, "repo.content", "update", body);
}

void WebhookService::OnRepoChange(const RepoChangeEvent& event) {
  const db::RepoRecord& r = event.repo;
  switch (event.change) {
    case RepoChange::Created: {
      // Its refs as created: its first push reports what moved from here.
      std::map<std::string, std::string> heads;
      if (auto refs = git::ListRefs(event.git_path)) {
        for (const auto& ref : *refs) heads.emplace(ref.name, ref.object.Hex());
      }
      (void)store_.SetRefHeads(r.id, heads);
      Emit(r, kRepoDomain, "repo", "create", json::object{{"repo", RepoJson(r, r.last_commit)}});
      return;
    }
    case RepoChange::Deleted:
      Emit(r, kRepoDomain, "repo", "delete", json::object{{"repo", RepoJson(r, "")}});
      return;
    case RepoChange::Moved: {
      // Told to the watchers of the old name, as the public hub does.
      db::RepoRecord old = r;
      old.ns = event.moved_from.ns;
      old.name = event.moved_from.name;
      json::object moved_to = RepoJson(r, "");
      json::object body{
          {"repo", RepoJson(old, "")},
          {"movedTo", json::object{{"name", r.ns + "/" + r.name}, {"owner", moved_to["owner"]}}}};
      Emit(old, kRepoDomain, "repo", "move", body, r.ns);
      return;
    }
    case RepoChange::ConfigUpdated: {
      json::object config;
      if (event.settings.is_private) config["private"] = *event.settings.is_private;
      if (event.settings.gated) {
        config["gated"] =
            event.settings.gated->empty() ? json::value(false) : json::value(*event.settings.gated);
      }
      Emit(r, kRepoDomain, "repo.config", "update",
           json::object{{"repo", RepoJson(r, "")}, {"updatedConfig", std::move(config)}});
      return;
    }
  }
}

void WebhookService::OnDiscussion(const DiscussionChange& change) {
  const db::RepoRecord& r = change.repo;
  const db::DiscussionRecord& d = change.discussion;
  const std::string web =
      options_.public_url + "/" + r.Id().UrlPath() + "/discussions/" + std::to_string(d.num);
  const std::string api = options_.public_url + "/api/" + std::string(RepoCollection(r.type)) +
                          "/" + r.ns + "/" + r.name + "/discussions/" + std::to_string(d.num);
  auto author = [&](int64_t id) { return json::object{{"id", ObjectId(id, '6')}}; };
  // A discussion has no row id of its own: its repo's and its number make one.
  json::object discussion{{"id", ObjectId((r.id << 30) | d.num, 'd')},
                          {"num", d.num},
                          {"title", d.title},
                          {"url", json::object{{"web", web}, {"api", api}}},
                          {"status", DiscussionStatus(d)},
                          {"author", author(d.author_id)},
                          {"isPullRequest", d.pull_request}};
  if (d.pull_request) {
    json::object changes{{"base", d.base_ref}};
    if (!d.merge_oid.empty()) changes["mergeCommitId"] = d.merge_oid;
    discussion["changes"] = std::move(changes);
  }
  json::object body{{"repo", RepoJson(r, "")}, {"discussion", std::move(discussion)}};
  if (change.comment) {
    const auto& c = *change.comment;
    body["comment"] = json::object{{"id", ObjectId(c.id, 'e')},
                                   {"author", author(c.author_id)},
                                   {"hidden", c.hidden},
                                   {"content", c.body},
                                   {"url", json::object{{"web", web + "#" + ObjectId(c.id, 'e')}}}};
  }
  std::string_view scope = "discussion", action = "update";
  switch (change.kind) {
    case DiscussionChangeKind::Created:
      action = "create";
      break;
    case DiscussionChangeKind::Updated:
      break;
    case DiscussionChangeKind::Commented:
      scope = "discussion.comment";
      action = "create";
      break;
    case DiscussionChangeKind::CommentUpdated:
      scope = "discussion.comment";
      break;
  }
  Emit(r, kDiscussionDomain, scope, action, body);
}

Result<void> WebhookService::Deliver(const db::JobRecord& job, std::stop_token stop) {
  boost::system::error_code ec;
  json::value v = json::parse(job.payload, ec);
  if (ec || !v.is_object()) return MakeError(ErrorCode::Internal, "a malformed delivery job");
  json::object& o = v.get_object();
  const json::string* id = o.contains("webhook") ? o["webhook"].if_string() : nullptr;
  json::object* body = o.contains("body") ? o["body"].if_object() : nullptr;
  if (!id || !body) return MakeError(ErrorCode::Internal, "a malformed delivery job");
  auto w = store_.Get(std::string(*id));
  if (!w && w.error().code == ErrorCode::NotFound) return {};  // deleted: nothing to send
  if (!w) return std::move(w).error();
  if (w->disabled) return {};
  (*body)["webhook"] = json::object{{"id", w->id}, {"version", kPayloadVersion}};

  // Where it goes, for the pause of receivers that did not answer.
  std::string receiver = w->url;
  if (auto where = net::ParseUrlHost(w->url)) {
    receiver = where->scheme + "://" + where->host + ":" + std::to_string(where->port);
  }
  db::WebhookDelivery d;
  d.webhook_id = w->id;
  d.event =
      o.contains("event") && o["event"].is_string() ? std::string(o["event"].get_string()) : "";
  d.repo = o.contains("repo") && o["repo"].is_string() ? std::string(o["repo"].get_string()) : "";
  d.attempt = job.attempts;
  d.created_at = Now();
  const auto started = std::chrono::steady_clock::now();
  bool answered = false;
  auto outcome = [&]() -> Result<void> {
    HANGAR_TRY(CheckUrl(w->url));
    if (int64_t until = PausedUntil(receiver); until > Now()) {
      return MakeError(ErrorCode::Unavailable, "not sent: the receiver did not answer a delivery " +
                                                   std::to_string(kPauseMs / 1000) +
                                                   " s ago or less; it is tried again after " +
                                                   Iso8601Millis(until));
    }
    net::HttpRequest req;
    req.method = "POST";
    req.url = w->url;
    req.headers = {{"Content-Type", "application/json"}, {"User-Agent", "Hangar-Webhooks"}};
    if (!w->secret.empty()) req.headers.emplace_back("X-Webhook-Secret", w->secret);
    req.body_bytes = json::serialize(*body);
    req.timeout = std::chrono::milliseconds(options_.timeout_ms);
    req.stop = stop;  // a stopping process does not wait for a slow receiver
    HANGAR_TRY(PinRequest(options_.private_hosts, req, kSetting));
    // The answer's body is not kept: only its status counts.
    net::BodySink drop = [](std::span<const char>) -> Result<void> { return {}; };
    net::HttpClient client;
    HANGAR_ASSIGN_OR_RETURN(auto res, client.Perform(req, &drop));
    answered = true;
    d.status = static_cast<int>(res.status);
    if (res.status < 200 || res.status > 299) {
      return MakeError(ErrorCode::Unavailable,
                       "the receiver answered " + std::to_string(res.status));
    }
    return {};
  }();
  d.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count();
  if (!outcome) {
    // curl's messages may quote the URL: never its user name and password.
    outcome = MakeError(outcome.error().code, Scrub(outcome.error().message, {UserInfoOf(w->url)}));
    d.error = outcome.error().message.substr(0, 500);
    // A receiver that did not answer (timed out, refused) holds no thread again for a
    // while: its other deliveries, of every webhook, fail at once until the pause ends.
    if (!answered && outcome.error().code == ErrorCode::Unavailable &&
        !outcome.error().message.starts_with("not sent:")) {
      Pause(receiver);
    }
  }
  if (auto logged = store_.AddDelivery(d, options_.keep_deliveries); !logged) {
    Log("services")->warn("webhook {}: delivery not logged: {}", w->id, logged.error().message);
  }
  return outcome;
}

}  // namespace hangar::services

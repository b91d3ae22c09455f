#pragma once
// WebhookService: users' webhooks (issue 19 §5, docs/webhooks.md) — what huggingface_hub's
// create_webhook, list_webhooks, get_webhook, update_webhook, enable_webhook,
// disable_webhook and delete_webhook reach — and their deliveries. A webhook watches repos,
// users and orgs for the domains "repo" (pushes, branches and tags, repo creation,
// deletion, moves and settings) and "discussion" (discussions, pull requests and their
// comments). Each event is turned into the public hub's payload (version 3) on the thread
// that made it, and queued as one job per webhook (kWebhookDeliverJob); the job runner's
// threads POST it with the webhook's secret in X-Webhook-Secret, retry a failure with
// back-off, and log every attempt. A slow or dead receiver so holds a job thread, never a
// push or a commit.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "core/principal.h"
#include "core/result.h"
#include "db/job_store.h"
#include "db/user_store.h"
#include "db/webhook_store.h"
#include "services/auth/access_policy.h"
#include "services/discussion/discussion_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// The job kind of one delivery; its payload is the event (JSON).
inline constexpr std::string_view kWebhookDeliverJob = "webhook.deliver";

// Bounds of a webhook.
inline constexpr size_t kMaxWebhookUrl = 2048;    // bytes
inline constexpr size_t kMaxWebhookSecret = 256;  // bytes
// How long a receiver that did not answer (timed out, refused) is not sent to, ms: a dead
// receiver then holds a delivery thread once per pause, not once per delivery.
inline constexpr int64_t kPauseMs = 60000;

struct WebhookOptions {
  // Hosts a webhook may POST to although they resolve to non-public addresses ("*": all):
  // as `[import] allow_private_hosts`, for receivers on the team's own network.
  std::vector<std::string> private_hosts;
  // This hub's own addresses, host and port (its listen address, its public URL's): no
  // webhook may target them (a loop of deliveries).
  std::vector<std::pair<std::string, uint16_t>> hub_addresses;
  std::string public_url;  // the base of the payloads' URLs, no trailing '/'
  int max_per_user = 100;
  int max_watched = 100;       // items one webhook watches
  int64_t timeout_ms = 10000;  // one delivery's whole request
  int max_attempts = 5;        // then the delivery is dead (hangar admin jobs)
  int keep_deliveries = 100;   // log entries kept per webhook
  // Queues a job (the App's JobRunner::Enqueue).
  std::function<Result<void>(db::NewJob)> enqueue;
  std::function<int64_t()> now_ms;  // unix ms; defaults to NowUnixMillis
};

// What a create or update sets; an update keeps what is absent.
struct WebhookSpec {
  std::optional<std::string> url;
  std::optional<std::vector<db::WebhookWatch>> watched;
  std::optional<std::vector<std::string>> domains;  // absent on create: every domain
  std::optional<std::string> secret;                // "" removes it
};

// Thread-safe; one per process. Calls block (database, DNS, HTTP).
class WebhookService {
 public:
  WebhookService(db::WebhookStore& store, db::UserStore& users, AccessPolicy& access,
                 RepoService& repos, WebhookOptions options);

  // Where this hub is, once it listens (its port may be chosen then): the base of the
  // payloads' URLs unless options.public_url is set, and one more address no webhook may
  // target. Call before serving and before the job threads start.
  void SetHub(const std::string& base_url, const std::string& host, uint16_t port);

  // The caller's webhooks, oldest first. Errors: Unauthorized, Forbidden (a key bound to
  // one repo).
  Result<std::vector<db::WebhookRecord>> List(const Principal& who);
  // Errors: as List; NotFound (none, or another user's).
  Result<db::WebhookRecord> Get(const Principal& who, const std::string& id);
  // Whether `who` may change webhook `id`, from a request's head: so that the body of a
  // change the service would refuse is never read. Errors: as Get; Forbidden (a read token).
  Result<void> CheckMayChange(const Principal& who, const std::string& id);
  // Checks and adds a webhook of the caller. Errors: as List; Forbidden (a read token);
  // BadRequest naming the field (url not http(s), or this hub, or a private address not
  // allowed; no or too many watched items, an unknown type, a repo, user or org that does
  // not exist or the caller cannot see; an unknown domain; a secret over 256 bytes or
  // with control characters); Conflict (max_per_user reached).
  Result<db::WebhookRecord> Create(const Principal& who, const WebhookSpec& spec);
  // Errors: as Create and Get.
  Result<db::WebhookRecord> Update(const Principal& who, const std::string& id,
                                   const WebhookSpec& spec);
  // Errors: as Update.
  Result<db::WebhookRecord> SetDisabled(const Principal& who, const std::string& id, bool disabled);
  // Deletes it; queued deliveries are dropped when their turn comes. Errors: as Update.
  Result<void> Delete(const Principal& who, const std::string& id);
  // Its last deliveries, newest first (at most `limit`). Errors: as Get.
  Result<std::vector<db::WebhookDelivery>> Deliveries(const Principal& who, const std::string& id,
                                                      int limit);

  // A push listener (RepoService::AddPushListener): compares the repo's refs with those
  // last recorded and queues a repo.content update for the refs that moved.
  void AfterPush(const RepoHandle& repo);
  // A change listener (RepoService::AddChangeListener): repo create, delete, move, and
  // repo.config update.
  void OnRepoChange(const RepoChangeEvent& event);
  // A discussion listener (DiscussionService::AddListener).
  void OnDiscussion(const DiscussionChange& change);

  // Runs one delivery job: POSTs its event to the webhook's URL and logs the attempt.
  // A webhook deleted or disabled meanwhile drops it (success). Errors (the job is retried):
  // Unavailable with what went wrong (no answer in time, a refused connection, a status
  // other than 2xx), BadRequest (the URL no longer passes the checks).
  Result<void> Deliver(const db::JobRecord& job, std::stop_token stop);

 private:
  // The caller as a webhook owner. Errors: Unauthorized, Forbidden.
  Result<void> CheckOwner(const Principal& who, bool write);
  // The caller's webhook `id`. Errors: as CheckOwner, NotFound.
  Result<db::WebhookRecord> Own(const Principal& who, const std::string& id, bool write);
  // Applies `spec` to `w`, checking every field. Errors: BadRequest, as Create.
  Result<void> Apply(const Principal& who, const WebhookSpec& spec, db::WebhookRecord& w);
  // Errors: BadRequest saying why `url` may not be POSTed to.
  Result<void> CheckUrl(const std::string& url);
  // Queues `body` (the payload without its "webhook" member) for every enabled webhook
  // that watches `repo` for `domain` and whose owner may see it (a private repo: read its
  // namespace, and `also_ns` when set).
  void Emit(const db::RepoRecord& repo, const std::string& domain, std::string_view scope,
            std::string_view action, const boost::json::object& body,
            std::string_view also_ns = {});
  // Until when deliveries to `receiver` ("scheme://host:port") are not sent (unix ms; 0:
  // they are), and the pause after one it did not answer.
  int64_t PausedUntil(const std::string& receiver);
  void Pause(const std::string& receiver);
  // The payload's "repo" member.
  boost::json::object RepoJson(const db::RepoRecord& repo, const std::string& head);
  int64_t Now() const { return options_.now_ms(); }

  db::WebhookStore& store_;
  db::UserStore& users_;
  AccessPolicy& access_;
  RepoService& repos_;
  WebhookOptions options_;
  std::mutex paused_mu_;
  std::map<std::string, int64_t> paused_;  // receiver → unix ms; guarded by paused_mu_
};

}  // namespace hangar::services

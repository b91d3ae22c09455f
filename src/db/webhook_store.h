#pragma once
// WebhookStore: users' webhooks (issue 19 §5, docs/webhooks.md) — where to POST, what they
// watch (repos, users, orgs) and for which domains — the log of their last deliveries, and
// the refs each repo was last seen with, from which a push's updated refs are computed.
// Interface only; SqlWebhookStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// One watched item: `kind` "model", "dataset", "space" (then `name` is "ns/name"), "user"
// or "org" (then `name` is the namespace).
struct WebhookWatch {
  std::string kind;
  std::string name;
  bool operator==(const WebhookWatch&) const = default;
};

struct WebhookRecord {
  std::string id;  // 24 lower-case hex, chosen by the service
  int64_t owner_id = 0;
  std::string url;
  std::string secret;                // "" = none
  std::vector<std::string> domains;  // "repo", "discussion"
  std::vector<WebhookWatch> watched;
  bool disabled = false;
  int64_t created_at = 0;  // unix ms (ListByOwner's order)
  int64_t updated_at = 0;  // unix ms
};

// One attempt at delivering one event.
struct WebhookDelivery {
  int64_t id = 0;  // assigned by the store, increasing
  std::string webhook_id;
  std::string event;  // "<scope>.<action>", e.g. "repo.content.update"
  std::string repo;   // "<type>s/<ns>/<name>" as in URLs, e.g. "models/alice/bert"
  int attempt = 1;    // 1 for the first try
  int status = 0;     // the receiver's HTTP status; 0: none (refused, timed out)
  std::string error;  // "" when the receiver answered 2xx
  int64_t latency_ms = 0;
  int64_t created_at = 0;  // unix ms
};

// The repo an event is about, for Matching.
struct WebhookTarget {
  std::string kind;       // "model", "dataset", "space"
  std::string full_name;  // "ns/name"
  std::string ns;
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class WebhookStore {
 public:
  virtual ~WebhookStore() = default;

  // Adds `w` unless its owner has `max_per_owner` webhooks already. Errors: Conflict (the
  // limit), NotFound (the owner is gone).
  virtual Result<void> Create(const WebhookRecord& w, int max_per_owner) = 0;
  // Errors: NotFound.
  virtual Result<WebhookRecord> Get(const std::string& id) = 0;
  // The owner's webhooks, oldest first.
  virtual Result<std::vector<WebhookRecord>> ListByOwner(int64_t owner_id) = 0;
  // Replaces url, secret, domains, watched, disabled and updated_at of `w.id`, all or
  // nothing. Errors: NotFound.
  virtual Result<void> Update(const WebhookRecord& w) = 0;
  // Deletes the webhook with its watches and deliveries; false when there was none.
  virtual Result<bool> Delete(const std::string& id) = 0;
  // The enabled webhooks watching `t` (the repo itself, or its namespace as a user or an
  // org) for `domain`, each once.
  virtual Result<std::vector<WebhookRecord>> Matching(const WebhookTarget& t,
                                                      const std::string& domain) = 0;

  // Logs `d` and keeps the webhook's newest `keep` deliveries only.
  virtual Result<void> AddDelivery(const WebhookDelivery& d, int keep) = 0;
  // The webhook's deliveries, newest first, at most `limit`.
  virtual Result<std::vector<WebhookDelivery>> Deliveries(const std::string& webhook_id,
                                                          int limit) = 0;

  // The refs (full name → 40 or 64 hex) repo `repo_id` was last seen with; nullopt when
  // they were never recorded (a repo older than this table: its first push sets them).
  virtual Result<std::optional<std::map<std::string, std::string>>> RefHeads(int64_t repo_id) = 0;
  // Records `heads` as the repo's refs (replacing all).
  virtual Result<void> SetRefHeads(int64_t repo_id,
                                   const std::map<std::string, std::string>& heads) = 0;
  // Sets `ref` to `value` ("" removes it) if it is `expected` ("" = absent): false, and
  // nothing changed, when another writer moved it first (`*current` then holds its value).
  virtual Result<bool> SwapRefHead(int64_t repo_id, const std::string& ref,
                                   const std::string& expected, const std::string& value,
                                   std::string* current) = 0;
};

}  // namespace hangar::db

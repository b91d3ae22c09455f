#pragma once
// SqlWebhookStore: WebhookStore over a Pool (tables webhooks, webhook_watches,
// webhook_deliveries, ref_heads and ref_heads_unknown, migration 23). Thread-safe.

#include <memory>

#include "db/sql/sql.h"
#include "db/webhook_store.h"

namespace hangar::db {

class SqlWebhookStore : public WebhookStore {
 public:
  explicit SqlWebhookStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<void> Create(const WebhookRecord& w, int max_per_owner) override;
  Result<WebhookRecord> Get(const std::string& id) override;
  Result<std::vector<WebhookRecord>> ListByOwner(int64_t owner_id) override;
  Result<void> Update(const WebhookRecord& w) override;
  Result<bool> Delete(const std::string& id) override;
  Result<std::vector<WebhookRecord>> Matching(const WebhookTarget& t,
                                              const std::string& domain) override;
  Result<void> AddDelivery(const WebhookDelivery& d, int keep) override;
  Result<std::vector<WebhookDelivery>> Deliveries(const std::string& webhook_id,
                                                  int limit) override;
  Result<std::optional<std::map<std::string, std::string>>> RefHeads(int64_t repo_id) override;
  Result<void> SetRefHeads(int64_t repo_id,
                           const std::map<std::string, std::string>& heads) override;
  Result<bool> SwapRefHead(int64_t repo_id, const std::string& ref, const std::string& expected,
                           const std::string& value, std::string* current) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

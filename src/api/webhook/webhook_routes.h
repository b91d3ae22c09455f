#pragma once
// Webhook routes (issue 19 §5, docs/webhooks.md), as huggingface_hub's webhook calls reach
// them; every one is the signed-in caller's own webhooks:
//   GET    /api/settings/webhooks               → [webhook]          (list_webhooks)
//   POST   /api/settings/webhooks               {watched, url, domains?, secret?}
//                                               → {webhook}          (create_webhook)
//   GET    /api/settings/webhooks/{id}          → {webhook}          (get_webhook)
//   POST   /api/settings/webhooks/{id}          {watched, url?, domains?, secret?}
//                                               → {webhook}          (update_webhook; PUT too)
//   POST   /api/settings/webhooks/{id}/enable   → {webhook}          (enable_webhook)
//   POST   /api/settings/webhooks/{id}/disable  → {webhook}          (disable_webhook)
//   DELETE /api/settings/webhooks/{id}          → {}                 (delete_webhook)
//   GET    /api/settings/webhooks/{id}/deliveries?limit= → its last deliveries, newest
//          first (a Hangar extension: the public hub's activity tab)
// A webhook is {id, url, watched: [{type, name}], domains, secret, disabled, job: null}.

#include "http/router.h"
#include "services/webhook/webhook_service.h"

namespace hangar::api {

// `webhooks` must outlive the router.
void AddWebhookRoutes(http::Router& router, services::WebhookService& webhooks);

}  // namespace hangar::api

#pragma once
// Routes of collections (issue 19 §6, docs/collections.md), in ApiFamily::Hf, as
// huggingface_hub's hf_api.py calls them:
//   GET    /api/collections?owner=&item=&sort=&limit=    → [collection]       (list_collections;
//          each with at most 4 items; pages through Link rel="next")
//   POST   /api/collections {title, namespace, private, description}
//          → collection; 409 {error, slug} for a title the namespace has   (create_collection)
//   GET    /api/collections/{ns}/{slug}                   → collection         (get_collection)
//   PATCH  /api/collections/{ns}/{slug} {title, description, position, private, theme}
//          → {success, data: collection}                 (update_collection_metadata)
//   DELETE /api/collections/{ns}/{slug}                   → {}                 (delete_collection)
//   POST   /api/collections/{ns}/{slug}/items {item: {id, type}, note}
//          → collection; 409 for an item it holds         (add_collection_item)
//   PATCH  /api/collections/{ns}/{slug}/items/{id} {note, position}
//          → {success, data: collection}                 (update_collection_item)
//   DELETE /api/collections/{ns}/{slug}/items/{id}       → {success, data: collection}
//                                                          (delete_collection_item)
// A collection: {slug, title, description?, owner: {_id, name, fullname, type, avatarUrl,
// isPro}, items: [{_id, position, type, id, note?: {text, html}, …}], lastUpdated, position,
// private, theme, upvotes, isUpvotedByUser, shareUrl}. Writes need a write credential.

#include "http/router.h"
#include "services/collection/collection_service.h"

namespace hangar::api {

// `collections` must outlive the router.
void AddCollectionRoutes(http::Router& router, services::CollectionService& collections);

}  // namespace hangar::api

#pragma once
// CollectionService: collections (issue 19 §6, docs/collections.md) — a user's or an org's
// curated lists of repos and of other collections, shown on their profiles, as
// huggingface_hub's get_collection, list_collections, create_collection,
// update_collection_metadata, delete_collection and add/update/delete_collection_item use
// them. Rules only: who may see and change a collection, its limits, titles, slugs, and
// which items a reader sees; the rows are db::CollectionStore's.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "db/collection_store.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// The public hub's limits (huggingface_hub's docstrings): characters are code points.
inline constexpr size_t kMaxCollectionTitle = 60;
inline constexpr size_t kMaxCollectionDescription = 150;
inline constexpr size_t kMaxCollectionNote = 500;
// The items a listing shows of each collection (list_collections: "truncated to 4").
inline constexpr int kCollectionPreviewItems = 4;
// A collection's themes; new collections get the first.
inline constexpr std::string_view kCollectionThemes[] = {"default", "orange", "blue",  "green",
                                                         "purple",  "pink",   "indigo"};

// The ObjectId kinds (core/util.h) of collections' ids (in slugs, and an item's `id` when
// it is a collection) and of items' `_id`.
inline constexpr char kCollectionIdKind = 'c';
inline constexpr char kCollectionItemIdKind = 'b';

// How much a hub holds (the App keeps the defaults, tests lower them), and its clock.
struct CollectionOptions {
  int64_t max_items = 1000;          // items per collection
  int64_t max_per_namespace = 1000;  // collections per user or org
  // Unix seconds, for createdAt and lastUpdated; defaults to NowUnix. Tests inject their own.
  std::function<int64_t()> now;
};

// A collection's slug, "<owner>/<title in lower-case ASCII words joined by '-'>-<24 hex>":
// the hex is the collection's id (core's ObjectId, kind 'c'); the title part follows the
// title and is not read back (an old slug still finds a renamed collection).
std::string CollectionSlug(std::string_view owner, std::string_view title, int64_t id);
// The slug of `c`.
std::string CollectionSlug(const db::CollectionRecord& c);
// The slug of the collection item `item` names (kind Collection).
std::string RefSlug(const db::CollectionItemRecord& item);

// A collection as a reader sees it: its row, its slug, and the items they may see, in
// order (positions those of the whole list: a hidden item leaves a gap, never a name).
struct CollectionView {
  db::CollectionRecord collection;
  std::string slug;
  std::vector<db::CollectionItemRecord> items;
  bool may_write = false;  // whether the reader may change it (pages show the forms)
};

// create_collection's body: namespace ("" = the caller's), title, description, private.
struct NewCollection {
  std::string ns;
  std::string title;
  std::string description;
  bool is_private = false;
};

// Create's answer: the collection made, or the one of that title the namespace has
// already (`existed`: the client's exists_ok reads its slug from the 409).
struct CreatedCollection {
  CollectionView view;
  bool existed = false;
};

// update_collection_metadata's body: an unset field stays.
struct CollectionChanges {
  std::optional<std::string> title, description, theme;
  std::optional<bool> is_private;
  std::optional<int64_t> position;  // in the owner's list, 0 first
};

// add_collection_item's body: item {id, type} and an optional note.
struct NewCollectionItem {
  std::string id;    // a repo id "ns/name", or a collection's slug
  std::string type;  // "model", "dataset", "space", "collection"
  std::string note;
};

// update_collection_item's body: an unset field stays.
struct CollectionItemChanges {
  std::optional<std::string> note;
  std::optional<int64_t> position;  // in the collection, 0 first
};

// list_collections' query.
struct CollectionListing {
  std::vector<std::string> owners;  // any of (empty: all)
  std::vector<std::string> items;   // "models/ns/name", "datasets/…", "spaces/…",
                                    // "collections/<slug>": holding any of them
  std::string sort;                 // "", "lastModified", "trending", "upvotes"
  std::string cursor;               // "" = the first page
  int limit = 100;                  // 1..1000
};

// A page of collections, each with at most kCollectionPreviewItems items.
struct CollectionPage {
  std::vector<CollectionView> items;
  std::string next_cursor;  // "" on the last page
};

// Thread-safe; one per process. Calls block (database).
//
// Who sees what: a public collection is seen by all, a private one by whoever may read
// its owner's namespace; an item naming a private repo or collection is shown only to
// whoever may read the namespace it is in. Who changes what: a signed-in user with a write
// credential and Write on the owner's namespace (their own, an org where they write).
// Errors common to every call: BadRequest naming what is wrong with the input; NotFound for
// a slug that names no collection the caller may see (also for a malformed slug).
class CollectionService {
 public:
  CollectionService(RepoService& repos, AccessPolicy& access, AccountService& accounts,
                    db::CollectionStore& store, CollectionOptions options = {});

  // The collection `slug` names, with every item `who` may see. Errors: NotFound.
  Result<CollectionView> Get(const Principal& who, std::string_view slug);
  // Makes a collection last in `in.ns`'s list. Errors: Unauthorized (anonymous),
  // Forbidden (a read token, a credential bound to one repo, no Write on the namespace),
  // NotFound (no such user or org), BadRequest (the title: empty, invisible, a line
  // separator or direction override, over 60 characters; the description over 150; the
  // namespace's limit). A title the namespace has is `existed`, nothing changed.
  Result<CreatedCollection> Create(const Principal& who, const NewCollection& in);
  // Changes the metadata of `slug`'s collection; a position moves it in its owner's list.
  // Errors: as Get, then as Create's for the caller and the fields; BadRequest (a theme
  // not in kCollectionThemes, a negative position); Conflict (another collection of the
  // namespace has that title).
  Result<CollectionView> Update(const Principal& who, std::string_view slug,
                                const CollectionChanges& c);
  // Deletes it and its items; the collections that held it lose that item. Errors: as
  // Update.
  Result<void> Delete(const Principal& who, std::string_view slug);
  // Whether `who` may change `slug`'s collection, from a request's head: so that the body
  // of a change the service would refuse is never read. Errors: as Update's for the caller.
  Result<void> CheckMayChange(const Principal& who, std::string_view slug);
  // Adds an item last; returns the collection. A repo or a collection is added only when
  // `who` may see it. Errors: as Update; BadRequest (a type other than model, dataset,
  // space, collection; a malformed id; a note over 500 characters; the collection itself;
  // the item limit); RepoNotFound or NotFound (no such repo or collection, or one `who`
  // may not see); Conflict (the collection holds it).
  Result<CollectionView> AddItem(const Principal& who, std::string_view slug,
                                 const NewCollectionItem& in);
  // Changes item `item_id` (its `_id`); returns the collection. Errors: as Update;
  // NotFound (no such item in it); BadRequest (the note, a negative position).
  Result<CollectionView> UpdateItem(const Principal& who, std::string_view slug,
                                    std::string_view item_id, const CollectionItemChanges& c);
  // Removes item `item_id`; returns the collection. Errors: as UpdateItem.
  Result<CollectionView> DeleteItem(const Principal& who, std::string_view slug,
                                    std::string_view item_id);
  // The collections `q` selects that `who` may see, most recently updated first. An item
  // filter naming a repo or collection `who` may not see matches nothing. Errors:
  // BadRequest (a sort other than lastModified, trending, upvotes; an item not
  // "<models|datasets|spaces>/<ns>/<name>" or "collections/<slug>"; a foreign cursor; an
  // owner name over 96 characters; over 100 owners or items).
  Result<CollectionPage> List(const Principal& who, const CollectionListing& q);
  // The collections of user or org `ns` that `who` may see, in its order (a profile's),
  // at most `limit`, each with at most kCollectionPreviewItems items. Errors: the store's.
  Result<std::vector<CollectionView>> OfNamespace(const Principal& who, std::string_view ns,
                                                  int limit);

 private:
  // The collection `slug` names if `who` may see it. Errors: NotFound.
  Result<db::CollectionRecord> Find(const Principal& who, std::string_view slug);
  // Find, for a change by `who`. Errors: as Find; Unauthorized, Forbidden.
  Result<db::CollectionRecord> FindToWrite(const Principal& who, std::string_view slug);
  // `c` with the items `who` may see, at most `limit`.
  Result<CollectionView> View(const Principal& who, db::CollectionRecord c, int limit);
  // Whether `who` may see collection `c`.
  bool MaySee(const Principal& who, const db::CollectionRecord& c);
  // Whether `who` may change the collections of namespace `ns`. Errors: Unauthorized,
  // Forbidden.
  Result<void> CheckWriter(const Principal& who, std::string_view ns);

  RepoService& repos_;
  AccessPolicy& access_;
  AccountService& accounts_;
  db::CollectionStore& store_;
  // The time now (options_.now or NowUnix).
  int64_t Now() const;

  const CollectionOptions options_;
};

}  // namespace hangar::services

#pragma once
// CollectionStore: collections (issue 19 §6, docs/collections.md) — a user's or an org's
// curated, ordered lists of repos and of other collections. Interface only;
// SqlCollectionStore (db/sql/, on SQLite or PostgreSQL) implements it. The rules (who may,
// limits, titles) are services::CollectionService's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/repo_id.h"
#include "core/result.h"
#include "db/visibility.h"

namespace hangar::db {

// What an item of a collection is: a repo of one type, or another collection.
enum class CollectionItemKind { Model, Dataset, Space, Collection };

// "model", "dataset", "space", "collection": the clients' `type` of an item.
std::string_view CollectionItemKindName(CollectionItemKind k);
// The inverse of CollectionItemKindName; nullopt for anything else (a "paper", a "bucket").
std::optional<CollectionItemKind> ParseCollectionItemKind(std::string_view s);
// The item kind of repos of `type`.
CollectionItemKind ItemKindOf(RepoType type);

// A collection, with its owner's name joined.
struct CollectionRecord {
  int64_t id = 0;
  int64_t owner_id = 0;        // users.id: a user or an org
  std::string owner;           // its name (read only)
  std::string owner_fullname;  // read only
  bool owner_is_org = false;   // read only
  std::string title;           // as CollectionService checked it
  std::string description;     // "" = none
  bool is_private = false;     // seen only by readers of the owner's namespace
  std::string theme = "default";
  int64_t position = 0;    // read: its index in the owner's list, 0 first
  int64_t created_at = 0;  // unix seconds
  int64_t updated_at = 0;  // unix seconds: metadata or items last changed
  int64_t item_count = 0;  // read: all its items, those a reader may not see included
};

// An item of a collection, with what it names joined.
struct CollectionItemRecord {
  int64_t id = 0;
  int64_t collection_id = 0;
  CollectionItemKind kind = CollectionItemKind::Model;
  int64_t position = 0;  // read: its index among all the collection's items, 0 first
  std::string note;      // "" = none
  int64_t created_at = 0;
  // A repo item's repo (kind Model, Dataset or Space).
  int64_t repo_id = 0;
  RepoType repo_type = RepoType::Model;
  std::string repo_ns, repo_name;
  bool repo_private = false;
  std::string repo_gated;  // "" | "auto" | "manual"
  int64_t repo_likes = 0, repo_downloads = 0, repo_last_modified = 0;
  // A collection item's collection (kind Collection).
  int64_t ref_id = 0;
  std::string ref_owner, ref_title;
  bool ref_private = false;
};

// Which private collections and repos a reader sees (db/visibility.h; a collection's
// namespace is its owner).
using CollectionVisibility = NamespaceVisibility;

// Where a page of a listing ends: the last row's (updated_at, id). Pages go most recently
// updated first.
struct CollectionCursor {
  int64_t updated_at = 0;
  int64_t id = 0;
  bool started = false;  // false: the first page
};

// A listing of collections (list_collections): those `visible` shows, of any of `owners`
// (empty: any owner), holding any of `repo_ids` or `collection_ids` when `by_item` (both
// empty: none), most recently updated first, after `after`, at most `limit`; or, with
// `owner_order`, in their owners' order (a profile's), `after` not used.
struct CollectionQuery {
  std::vector<std::string> owners;
  bool owner_order = false;
  bool by_item = false;
  std::vector<int64_t> repo_ids;
  std::vector<int64_t> collection_ids;
  CollectionVisibility visible;
  CollectionCursor after;
  int limit = 100;
};

// What UpdateItem changes; an unset field stays.
struct CollectionItemUpdate {
  std::optional<std::string> note;
  std::optional<int64_t> position;  // its new index, 0 first; past the end: last
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class CollectionStore {
 public:
  virtual ~CollectionStore() = default;

  // Records `c` (owner_id, title, description, is_private, theme, created_at; updated_at set
  // to created_at) last in its owner's list, unless the owner has `max_per_owner` already;
  // returns it as Find would. Errors: Conflict (the owner has a collection of that title),
  // BadRequest (the owner's limit), NotFound (no such owner).
  virtual Result<CollectionRecord> Create(const CollectionRecord& c, int64_t max_per_owner) = 0;
  // Collection `id`. Errors: NotFound.
  virtual Result<CollectionRecord> Find(int64_t id) = 0;
  // The id of the owner's collection titled `title`, exactly; nullopt when none.
  virtual Result<std::optional<int64_t>> FindByTitle(int64_t owner_id, std::string_view title) = 0;
  // Stores `c`'s title, description, is_private, theme and updated_at. Errors: NotFound,
  // Conflict (the owner has another collection of that title).
  virtual Result<void> Update(const CollectionRecord& c) = 0;
  // Moves collection `id` to index `position` of its owner's list (past the end: last).
  // Errors: NotFound.
  virtual Result<void> Move(int64_t id, int64_t position, int64_t now) = 0;
  // Deletes it with its items, and the items of other collections that named it; false
  // when there was none.
  virtual Result<bool> Delete(int64_t id) = 0;
  // The collections `q` selects.
  virtual Result<std::vector<CollectionRecord>> List(const CollectionQuery& q) = 0;
  // The items of collection `id` that `visible` shows, in order, at most `limit`.
  virtual Result<std::vector<CollectionItemRecord>> Items(int64_t id,
                                                          const CollectionVisibility& visible,
                                                          int limit) = 0;
  // Adds an item naming repo `repo_id` (kind Model, Dataset, Space) or collection `ref_id`
  // (kind Collection) last in collection `id`, unless it has `max_items` already, and marks
  // the collection updated. Errors: Conflict (it holds that item), BadRequest (the limit),
  // NotFound (the collection, the repo or the collection named is gone).
  virtual Result<CollectionItemRecord> AddItem(int64_t id, CollectionItemKind kind,
                                               int64_t target_id, const std::string& note,
                                               int64_t now, int64_t max_items) = 0;
  // Item `item_id` of collection `id`, without its visibility checked. Errors: NotFound.
  virtual Result<CollectionItemRecord> FindItem(int64_t id, int64_t item_id) = 0;
  // Changes item `item_id` of collection `id` and marks the collection updated. Errors:
  // NotFound.
  virtual Result<void> UpdateItem(int64_t id, int64_t item_id, const CollectionItemUpdate& u,
                                  int64_t now) = 0;
  // Removes it and marks the collection updated; false when there was none.
  virtual Result<bool> DeleteItem(int64_t id, int64_t item_id, int64_t now) = 0;
};

}  // namespace hangar::db

#pragma once
// SqlCollectionStore: CollectionStore over a Pool (tables collections and collection_items,
// migration 24). Thread-safe.

#include <memory>

#include "db/collection_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlCollectionStore : public CollectionStore {
 public:
  explicit SqlCollectionStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<CollectionRecord> Create(const CollectionRecord& c, int64_t max_per_owner) override;
  Result<CollectionRecord> Find(int64_t id) override;
  Result<std::optional<int64_t>> FindByTitle(int64_t owner_id, std::string_view title) override;
  Result<void> Update(const CollectionRecord& c) override;
  Result<void> Move(int64_t id, int64_t position, int64_t now) override;
  Result<bool> Delete(int64_t id) override;
  Result<std::vector<CollectionRecord>> List(const CollectionQuery& q) override;
  Result<std::vector<CollectionItemRecord>> Items(int64_t id, const CollectionVisibility& visible,
                                                  int limit) override;
  Result<CollectionItemRecord> AddItem(int64_t id, CollectionItemKind kind, int64_t target_id,
                                       const std::string& note, int64_t now,
                                       int64_t max_items) override;
  Result<CollectionItemRecord> FindItem(int64_t id, int64_t item_id) override;
  Result<void> UpdateItem(int64_t id, int64_t item_id, const CollectionItemUpdate& u,
                          int64_t now) override;
  Result<bool> DeleteItem(int64_t id, int64_t item_id, int64_t now) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

#pragma once
// SqlLikeStore: LikeStore over a Pool (table repo_likes and repos.likes, migration 19).
// Thread-safe.

#include <memory>

#include "db/like_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlLikeStore : public LikeStore {
 public:
  explicit SqlLikeStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<bool> Like(int64_t repo_id, int64_t user_id, int64_t now) override;
  Result<bool> Unlike(int64_t repo_id, int64_t user_id) override;
  Result<bool> Likes(int64_t repo_id, int64_t user_id) override;
  Result<std::vector<LikeRecord>> Likers(int64_t repo_id, const LikeCursor& after,
                                         int limit) override;
  Result<std::vector<LikeRecord>> LikedBy(int64_t user_id, const LikeVisibility& visible,
                                          const LikeCursor& after, int limit) override;
  Result<int64_t> CountLikedBy(int64_t user_id, const LikeVisibility& visible) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

#pragma once
// LikeStore: the users who like a repo (issue 19 §3, docs/social.md) — one row per (repo,
// user), with the repo's count (RepoRecord::likes) kept in the same transaction. Interface
// only; SqlLikeStore (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <string>
#include <vector>

#include "core/repo_id.h"
#include "core/result.h"
#include "db/visibility.h"

namespace hangar::db {

// A like, with the user's and the repo's names joined for listings.
struct LikeRecord {
  int64_t repo_id = 0;
  int64_t user_id = 0;
  int64_t created_at = 0;  // unix seconds
  std::string user_name, user_fullname;
  RepoType repo_type = RepoType::Model;
  std::string repo_ns, repo_name;
  bool repo_private = false;
};

// Where a page of likes ends: the last row's (created_at, id of the other side). Pages go
// newest first; {} starts at the newest.
struct LikeCursor {
  int64_t created_at = 0;
  int64_t id = 0;
  bool started = false;  // false: the first page
};

// Which repos a user's likes may show (db/visibility.h).
using LikeVisibility = NamespaceVisibility;

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class LikeStore {
 public:
  virtual ~LikeStore() = default;

  // Records that the user likes the repo and counts it; false when they did already.
  // Errors: NotFound (the repo or the user is gone).
  virtual Result<bool> Like(int64_t repo_id, int64_t user_id, int64_t now) = 0;
  // Removes the like and its count; false when there was none.
  virtual Result<bool> Unlike(int64_t repo_id, int64_t user_id) = 0;
  // Whether the user likes the repo.
  virtual Result<bool> Likes(int64_t repo_id, int64_t user_id) = 0;
  // The repo's likers, newest first, after `after`, at most `limit`.
  virtual Result<std::vector<LikeRecord>> Likers(int64_t repo_id, const LikeCursor& after,
                                                 int limit) = 0;
  // The repos the user likes that `visible` shows, newest like first, after `after`, at
  // most `limit`.
  virtual Result<std::vector<LikeRecord>> LikedBy(int64_t user_id, const LikeVisibility& visible,
                                                  const LikeCursor& after, int limit) = 0;
  // How many repos the user likes that `visible` shows.
  virtual Result<int64_t> CountLikedBy(int64_t user_id, const LikeVisibility& visible) = 0;
};

}  // namespace hangar::db

#pragma once
// SqlDiscussionStore: DiscussionStore over a Pool (tables discussions, discussion_events
// and comment_versions, migration 21). Thread-safe.

#include <memory>

#include "db/discussion_store.h"
#include "db/sql/sql.h"

namespace hangar::db {

class SqlDiscussionStore : public DiscussionStore {
 public:
  explicit SqlDiscussionStore(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

  Result<std::vector<int64_t>> Create(const DiscussionRecord& d,
                                      const std::vector<DiscussionEventRecord>& events) override;
  Result<int> HighestNum(int64_t repo_id) override;
  Result<std::optional<DiscussionRecord>> Get(int64_t repo_id, int num) override;
  Result<std::vector<DiscussionRecord>> List(int64_t repo_id, const DiscussionFilter& filter,
                                             int offset, int limit) override;
  Result<int64_t> Count(int64_t repo_id, const DiscussionFilter& filter) override;
  Result<std::vector<DiscussionRecord>> OpenPullRequests(int64_t repo_id) override;
  Result<std::vector<DiscussionEventRecord>> Events(int64_t repo_id, int num) override;
  Result<std::optional<DiscussionEventRecord>> Event(int64_t repo_id, int num, int64_t id) override;
  Result<std::vector<CommentVersion>> Versions(int64_t event_id) override;
  Result<std::optional<std::vector<int64_t>>> Update(
      int64_t repo_id, int num, const DiscussionUpdate& u,
      const std::vector<DiscussionEventRecord>& events, int64_t now) override;
  Result<void> EditComment(int64_t event_id, std::string_view body, std::string_view editor,
                           int64_t now) override;
  Result<void> HideComment(int64_t event_id, int64_t now) override;

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace hangar::db

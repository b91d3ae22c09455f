#pragma once
// DiscussionStore: the discussions and pull requests of repos (issue 19 §2,
// docs/discussions.md). A discussion is numbered per repo (pull requests share the
// numbers; pull request n is refs/pr/<n>) and holds a list of events: comments (with the
// versions of their text), status changes, title changes and, on pull requests, the
// commits pushed to them. Interface only; SqlDiscussionStore (db/sql/, on SQLite or
// PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// A pull request is "draft" until its first commit; "merged" is for pull requests only.
enum class DiscussionStatus { Open, Closed, Merged, Draft };

// "open" / "closed" / "merged" / "draft".
std::string_view DiscussionStatusName(DiscussionStatus s);
// The inverse of DiscussionStatusName; none for anything else.
std::optional<DiscussionStatus> ParseDiscussionStatus(std::string_view s);

struct DiscussionRecord {
  int64_t repo_id = 0;
  int num = 0;
  bool pull_request = false;
  std::string title;
  DiscussionStatus status = DiscussionStatus::Open;
  int64_t author_id = 0;  // 0: the author's account is gone
  std::string author_name;
  std::string base_ref;    // pull requests: the full ref they merge into ("refs/heads/main")
  std::string head_oid;    // pull requests: refs/pr/<num>'s commit when last seen (hex)
  std::string merge_oid;   // merged pull requests: the target's commit after the merge
  std::string base_oid;    // merged pull requests: the target's commit before the merge
  int64_t created_at = 0;  // unix seconds
  int64_t updated_at = 0;  // unix seconds: the last event
  int64_t comments = 0;    // read only: how many comment events it holds
};

enum class DiscussionEventKind { Comment, StatusChange, TitleChange, Commit };

// "comment" / "status-change" / "title-change" / "commit" (the public hub's event types).
std::string_view DiscussionEventKindName(DiscussionEventKind k);

struct DiscussionEventRecord {
  int64_t id = 0;  // assigned by the store, increasing
  int64_t repo_id = 0;
  int num = 0;
  DiscussionEventKind kind = DiscussionEventKind::Comment;
  int64_t author_id = 0;  // 0: none (a commit by someone without an account, or gone)
  std::string author_name;
  // Comment: its current text ("" once hidden); StatusChange: the new status's name;
  // TitleChange: the new title; Commit: the commit's subject.
  std::string body;
  std::string detail;  // TitleChange: the old title; Commit: the commit id (hex)
  bool edited = false;
  bool hidden = false;
  std::string editor_name;  // comments: who wrote the current text
  int64_t created_at = 0;   // unix seconds
  int64_t updated_at = 0;   // unix seconds: the current text's
};

// One version of a comment's text.
struct CommentVersion {
  std::string body;
  std::string author_name;
  int64_t created_at = 0;
};

// Which discussions a listing shows.
struct DiscussionFilter {
  std::optional<bool> pull_request;  // none: both kinds
  std::optional<bool> open;          // true: open or draft, false: closed or merged
  std::string author;                // "" any; else the author's name
};

// A change of a discussion, applied only while its conditions hold.
struct DiscussionUpdate {
  std::optional<DiscussionStatus> status;
  std::optional<std::string> title;
  std::optional<std::string> head_oid;
  std::optional<std::string> merge_oid;
  std::optional<std::string> base_oid;
  std::vector<DiscussionStatus> if_status;  // empty: any status
  std::optional<std::string> if_head_oid;   // the head it must still have
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class DiscussionStore {
 public:
  virtual ~DiscussionStore() = default;

  // Inserts `d` under its num, with `events` (their repo_id and num are d's; a comment's
  // first version is recorded). Returns the events' ids. Errors: Conflict (the num is
  // taken), NotFound (the repo is gone).
  virtual Result<std::vector<int64_t>> Create(const DiscussionRecord& d,
                                              const std::vector<DiscussionEventRecord>& events) = 0;
  // The repo's highest discussion number, 0 when it has none.
  virtual Result<int> HighestNum(int64_t repo_id) = 0;
  virtual Result<std::optional<DiscussionRecord>> Get(int64_t repo_id, int num) = 0;
  // The repo's discussions that `filter` keeps, newest first, skipping `offset`, at most
  // `limit`.
  virtual Result<std::vector<DiscussionRecord>> List(int64_t repo_id,
                                                     const DiscussionFilter& filter, int offset,
                                                     int limit) = 0;
  virtual Result<int64_t> Count(int64_t repo_id, const DiscussionFilter& filter) = 0;
  // The repo's open and draft pull requests.
  virtual Result<std::vector<DiscussionRecord>> OpenPullRequests(int64_t repo_id) = 0;
  // The discussion's events, oldest first.
  virtual Result<std::vector<DiscussionEventRecord>> Events(int64_t repo_id, int num) = 0;
  virtual Result<std::optional<DiscussionEventRecord>> Event(int64_t repo_id, int num,
                                                             int64_t id) = 0;
  // A comment's versions, newest first (empty once hidden).
  virtual Result<std::vector<CommentVersion>> Versions(int64_t event_id) = 0;
  // Applies `u` (updated_at = now) and appends `events` in one transaction when its
  // conditions hold. Returns the events' ids, or none when a condition failed.
  // Errors: NotFound (no such discussion).
  virtual Result<std::optional<std::vector<int64_t>>> Update(
      int64_t repo_id, int num, const DiscussionUpdate& u,
      const std::vector<DiscussionEventRecord>& events, int64_t now) = 0;
  // Gives a visible comment a new text, written by `editor`, as its newest version.
  // Errors: NotFound (no such comment), Conflict (hidden).
  virtual Result<void> EditComment(int64_t event_id, std::string_view body, std::string_view editor,
                                   int64_t now) = 0;
  // Hides a comment: its text and its versions are erased for good.
  // Errors: NotFound (no such comment).
  virtual Result<void> HideComment(int64_t event_id, int64_t now) = 0;
};

}  // namespace hangar::db

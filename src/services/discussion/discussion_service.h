#pragma once
// DiscussionService: the discussions and pull requests of repos (issue 19 §2,
// docs/discussions.md) — what huggingface_hub's get_repo_discussions,
// get_discussion_details, create_discussion / create_pull_request, comment_discussion,
// rename_discussion, change_discussion_status, merge_pull_request, edit_discussion_comment
// and hide_discussion_comment reach, and the web's pages. Pull request n is refs/pr/<n>:
// it starts at its base branch's head, takes commits by git push or by create_commit
// (told by RepoService's push listeners: AfterPush records them as events), and merges
// into the base branch (git/merge.h). Rules only; the rows are db::DiscussionStore's.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/discussion_store.h"
#include "git/history.h"
#include "git/ref_writer.h"
#include "services/content/commit_service.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// Bounds of what a discussion takes.
inline constexpr size_t kMaxDiscussionTitle = 200;       // characters (code points)
inline constexpr size_t kMaxDiscussionComment = 65536;   // bytes
inline constexpr int kDiscussionsPerPage = 50;           // the public hub's page size
inline constexpr int64_t kMaxDiscussionComments = 1000;  // per discussion
// The largest discussion number (pull request n is refs/pr/<n>).
inline constexpr int kMaxDiscussionNumber = git::kMaxPullRequestNumber;

// A page of a repo's discussions, newest first.
struct DiscussionPage {
  std::vector<db::DiscussionRecord> items;
  int64_t count = 0;  // how many the filter keeps in all
  int start = 0;      // the index of items[0] among them
};

// An event, with a comment's text versions (newest first).
struct DiscussionEvent {
  db::DiscussionEventRecord record;
  std::vector<db::CommentVersion> versions;
};

// A discussion with everything its page and get_discussion_details show.
struct DiscussionDetails {
  db::RepoRecord repo;
  db::DiscussionRecord discussion;
  std::vector<DiscussionEvent> events;
  // What the caller may do: comment (any signed-in reader with a write credential),
  // change its status and title (its author, or a writer of the repo), merge (a writer).
  bool can_comment = false, can_change = false, can_merge = false;
  // Pull requests:
  std::vector<std::string> conflicts;     // files that conflict with the base branch
  bool unrelated = false;                 // it shares no history with the base branch
  bool mergeable = false;                 // open, with commits, no conflict
  std::optional<git::CommitDetail> diff;  // its changes against the base (asked for, and
                                          // only for readers who pass the repo's gate)
};

// What a new discussion is.
struct NewDiscussion {
  std::string title;
  std::string description;  // its first comment; "" none
  bool pull_request = false;
};

// What happened in a discussion, for its listeners (webhooks' discussion and
// discussion.comment events, docs/webhooks.md).
enum class DiscussionChangeKind {
  Created,         // opened (a pull request too); `comment`: its description, if any
  Updated,         // status (merged too) or title changed
  Commented,       // `comment` added
  CommentUpdated,  // `comment` edited or hidden
};
struct DiscussionChange {
  DiscussionChangeKind kind = DiscussionChangeKind::Created;
  db::RepoRecord repo;
  db::DiscussionRecord discussion;  // after the change
  std::optional<db::DiscussionEventRecord> comment;
};
// Called after a change was stored, on the writing thread; must not block long.
using DiscussionListener = std::function<void(const DiscussionChange&)>;

// Thread-safe; one per process. Calls block (database, git).
class DiscussionService : public PullRequestOpener {
 public:
  DiscussionService(RepoService& repos, ContentService& content, db::DiscussionStore& store,
                    git::DiffLimits diff_limits = {});

  // Page `page` (0-based, kDiscussionsPerPage each) of the discussions of `id` that
  // `filter` keeps. Errors: as RepoService::OpenMetadata; BadRequest (a negative page).
  Result<DiscussionPage> List(const Principal& who, const RepoId& id,
                              const db::DiscussionFilter& filter, int page);
  // Discussion `num` with its events; with `diff`, a pull request's changes. Errors: as
  // RepoService::OpenMetadata; NotFound ("discussion #<n> not found in <repo>").
  Result<DiscussionDetails> Details(const Principal& who, const RepoId& id, int num, bool diff);
  // Opens a discussion, or a pull request (draft, refs/pr/<n> at the default branch's
  // head; writers of the repo only, as only they may commit to it). Returns its number.
  // Errors: Unauthorized, Forbidden (a read token, a key; a pull request by a reader), as
  // OpenMetadata, BadRequest (title or description), Conflict (no number left).
  Result<int> Create(const Principal& who, const RepoId& id, const NewDiscussion& in);
  // Adds a comment. Errors: as Create, NotFound, BadRequest (kMaxDiscussionComments
  // reached).
  Result<db::DiscussionEventRecord> Comment(const Principal& who, const RepoId& id, int num,
                                            const std::string& text);
  // Opens or closes (`status` "open" or "closed"), with an optional comment. Needs its
  // author or a writer. Errors: as Comment; Forbidden; BadRequest (another status, the
  // status it has, a merged pull request).
  Result<db::DiscussionEventRecord> ChangeStatus(const Principal& who, const RepoId& id, int num,
                                                 const std::string& status,
                                                 const std::string& comment);
  // Renames. Needs its author or a writer. Errors: as ChangeStatus.
  Result<db::DiscussionEventRecord> Rename(const Principal& who, const RepoId& id, int num,
                                           const std::string& title);
  // Merges pull request `num` into its base branch — a fast-forward, or a merge commit —
  // and marks it merged, with an optional comment; the push listeners are told. Needs
  // Write. Errors: as RepoService::Open with Write; NotFound; BadRequest (a discussion, a
  // closed or merged pull request, nothing to merge); Conflict (files conflict — nothing
  // changes — or the base branch moved meanwhile).
  Result<db::DiscussionEventRecord> Merge(const Principal& who, const RepoId& id, int num,
                                          const std::string& comment);
  // Gives comment `event_id` of discussion `num` a new text; only its author may. Returns
  // it with its versions. Errors: as Comment; Forbidden; Conflict (hidden).
  Result<DiscussionEvent> EditComment(const Principal& who, const RepoId& id, int num,
                                      int64_t event_id, const std::string& text);
  // Hides a comment for good (its text is erased); its author or a writer may. Errors: as
  // EditComment.
  Result<db::DiscussionEventRecord> HideComment(const Principal& who, const RepoId& id, int num,
                                                int64_t event_id);

  // A push listener (RepoService::AddPushListener): records the commits that reached the
  // repo's open pull requests as commit events; a draft with commits becomes open.
  void AfterPush(const RepoHandle& repo);

  // Adds a listener told of every change (before serving: not thread-safe).
  void AddListener(DiscussionListener listener) { listeners_.push_back(std::move(listener)); }
  // PullRequestOpener: an open pull request takes commits, and so does a refs/pr/<n> older
  // than discussions (it has none); a closed or merged one does not (BadRequest).
  Result<void> CheckOpen(const RepoHandle& repo, int num) override;

  // PullRequestOpener: the pull request of a create_pr commit, open, with its commit.
  Result<int> OpenPullRequest(const Principal& who, const RepoHandle& repo, const std::string& base,
                              const Oid& head, const std::string& title,
                              const std::string& description) override;

 private:
  struct Opened;
  // The repo (OpenMetadata) and discussion `num` for a caller who will write to it.
  // Errors: Unauthorized, Forbidden (a read token, a key), NotFound.
  Result<Opened> OpenForWrite(const Principal& who, const RepoId& id, int num);
  // Inserts discussion `d` under the next free number (past every refs/pr/<n>), making
  // refs/pr/<n> at `pr_head` for a pull request. Returns the number.
  Result<int> Insert(const RepoHandle& repo, db::DiscussionRecord d,
                     std::vector<db::DiscussionEventRecord> events,
                     const std::optional<Oid>& pr_head);
  // Records the commits of pull request `d` up to `head` (its new refs/pr/<n>).
  Result<void> RecordCommits(const RepoHandle& repo, const db::DiscussionRecord& d,
                             const Oid& head);
  // The event `id` of discussion `num`, with what the store has after a change.
  Result<db::DiscussionEventRecord> EventAfter(int64_t repo_id, int num, int64_t id);
  // EventAfter, then tells the listeners of change `kind` to discussion `num`.
  Result<db::DiscussionEventRecord> Told(const db::RepoRecord& repo, int num, int64_t id,
                                         DiscussionChangeKind kind);
  // Tells the listeners of change `kind` to discussion `num` (re-read from the store).
  void Tell(DiscussionChangeKind kind, const db::RepoRecord& repo, int num,
            std::optional<db::DiscussionEventRecord> comment);

  RepoService& repos_;
  ContentService& content_;
  db::DiscussionStore& store_;
  const git::DiffLimits diff_limits_;
  std::vector<DiscussionListener> listeners_;  // set before serving
};

}  // namespace hangar::services

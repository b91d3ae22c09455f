#include "services/discussion/discussion_service.h"

#include <algorithm>
#include <ctime>

#include "core/log.h"
#include "core/util.h"
#include "git/merge.h"
#include "git/ref_writer.h"

namespace hangar::services {

using db::DiscussionEventKind;
using db::DiscussionEventRecord;
using db::DiscussionRecord;
using db::DiscussionStatus;

namespace {

// Commit events recorded per push, at most: a push of a long history into a pull request
// shows its newest commits.
constexpr size_t kMaxCommitEvents = 100;
// Attempts at taking a discussion number when others take them at the same time.
constexpr int kMaxNumberAttempts = 8;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

// A title as discussions keep it: trimmed, one line of 1 to kMaxDiscussionTitle
// characters, not all invisible, without characters that would make it read as another
// (core's TitleProblem). Errors: BadRequest.
Result<std::string> CheckTitle(std::string_view title) {
  std::string t(TrimBlanks(title));
  if (auto problem = TitleProblem(t, kMaxDiscussionTitle)) return Bad("the title " + *problem);
  return t;
}

// Whether `text` is only spaces, tabs and line breaks.
bool Blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// A comment's text: at most kMaxDiscussionComment bytes of UTF-8 (line breaks allowed),
// not blank unless `may_be_empty`. Errors: BadRequest.
Result<void> CheckComment(std::string_view text, bool may_be_empty) {
  if (text.size() > kMaxDiscussionComment) {
    return Bad("the comment is over " + std::to_string(kMaxDiscussionComment) + " bytes");
  }
  if (auto problem = ShownTextProblem(text, true))
    return Bad("the comment " + std::string(*problem));
  if (!may_be_empty && Blank(text)) return Bad("the comment is empty");
  return {};
}

// Who may write to discussions: a user signed in with a credential that may write.
// Errors: Unauthorized (anonymous), Forbidden (a read token, a key bound to one repo).
Result<void> CheckWriter(const Principal& who) {
  if (who.anonymous)
    return MakeError(ErrorCode::Unauthorized, "sign in to take part in discussions");
  if (who.deploy_key_id != 0 || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a key bound to one repo cannot write to discussions");
  }
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden,
                     "token '" + who.token_name + "' is read-only; discussions need a write token");
  }
  return {};
}

Error NoSuchDiscussion(int num, const RepoId& id) {
  return MakeError(ErrorCode::NotFound,
                   "discussion #" + std::to_string(num) + " not found in " + id.Id());
}

DiscussionEventRecord NewEvent(DiscussionEventKind kind, const Principal& who, std::string body,
                               int64_t now) {
  DiscussionEventRecord e;
  e.kind = kind;
  e.author_id = who.user_id;
  e.author_name = who.name;
  e.body = std::move(body);
  e.created_at = e.updated_at = now;
  return e;
}

std::string PullRequestRef(int num) { return "refs/pr/" + std::to_string(num); }

bool IsOpen(DiscussionStatus s) {
  return s == DiscussionStatus::Open || s == DiscussionStatus::Draft;
}

}  // namespace

struct DiscussionService::Opened {
  RepoHandle repo;
  DiscussionRecord discussion;
  // The caller wrote it, or may write to the repo.
  bool may_change = false;
};

DiscussionService::DiscussionService(RepoService& repos, ContentService& content,
                                     db::DiscussionStore& store, git::DiffLimits diff_limits)
    : repos_(repos), content_(content), store_(store), diff_limits_(diff_limits) {}

Result<DiscussionPage> DiscussionService::List(const Principal& who, const RepoId& id,
                                               const db::DiscussionFilter& filter, int page) {
  if (page < 0 || page > 1'000'000) return Bad("'p' is a page number from 0");
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  DiscussionPage out;
  out.start = page * kDiscussionsPerPage;
  HANGAR_ASSIGN_OR_RETURN(out.count, store_.Count(repo.record.id, filter));
  HANGAR_ASSIGN_OR_RETURN(out.items,
                          store_.List(repo.record.id, filter, out.start, kDiscussionsPerPage));
  return out;
}

Result<DiscussionDetails> DiscussionService::Details(const Principal& who, const RepoId& id,
                                                     int num, bool diff) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  HANGAR_ASSIGN_OR_RETURN(auto d, store_.Get(repo.record.id, num));
  if (!d) return NoSuchDiscussion(num, id);
  DiscussionDetails out;
  HANGAR_ASSIGN_OR_RETURN(auto events, store_.Events(repo.record.id, num));
  for (auto& e : events) {
    DiscussionEvent ev{std::move(e), {}};
    // Only an edited comment has earlier versions to show.
    if (ev.record.kind == DiscussionEventKind::Comment && ev.record.edited && !ev.record.hidden) {
      HANGAR_ASSIGN_OR_RETURN(ev.versions, store_.Versions(ev.record.id));
    }
    out.events.push_back(std::move(ev));
  }
  const bool writer = CheckWriter(who).has_value();
  out.can_comment = writer;
  out.can_change = writer && ((d->author_id != 0 && d->author_id == who.user_id) ||
                              repo.access >= Access::Write);
  out.can_merge = writer && repo.access >= Access::Write && !repo.record.is_mirror &&
                  d->pull_request && IsOpen(d->status);
  if (d->pull_request && IsOpen(d->status)) {
    // Conflicts name files only (metadata); the diff shows their bytes, so it needs the gate.
    auto base = content_.ResolveRevision(repo, d->base_ref);
    auto head = content_.ResolveRevision(repo, PullRequestRef(num));
    if (base && head) {
      HANGAR_ASSIGN_OR_RETURN(auto check, git::CheckMerge(repo.git_path, *base, *head));
      out.conflicts = std::move(check.conflicts);
      out.unrelated = check.unrelated;
      out.mergeable = !check.up_to_date && !check.unrelated && out.conflicts.empty();
      if (diff && !check.unrelated && repos_.CheckGate(who, repo.record)) {
        HANGAR_ASSIGN_OR_RETURN(auto changes,
                                git::CompareCommits(repo.git_path, *base, *head, diff_limits_));
        out.diff = std::move(changes);
      }
    }
    if (!base || !head) out.can_merge = false;
  } else if (d->pull_request && diff && !d->base_oid.empty() &&
             repos_.CheckGate(who, repo.record)) {
    // A merged pull request shows what it brought: its head at the merge against the base
    // it merged into.
    auto base = Oid::ParseHex(d->base_oid);
    auto head = Oid::ParseHex(d->head_oid);
    if (base && head) {
      auto changes = git::CompareCommits(repo.git_path, *base, *head, diff_limits_);
      if (changes) out.diff = std::move(*changes);
    }
  }
  out.repo = std::move(repo.record);
  out.discussion = std::move(*d);
  return out;
}

Result<int> DiscussionService::Insert(const RepoHandle& repo, DiscussionRecord d,
                                      std::vector<DiscussionEventRecord> events,
                                      const std::optional<Oid>& pr_head) {
  for (int attempt = 0; attempt < kMaxNumberAttempts; ++attempt) {
    HANGAR_ASSIGN_OR_RETURN(int highest, store_.HighestNum(repo.record.id));
    if (pr_head) {
      // The ref first: git takes the number past every refs/pr/<n> (some may predate
      // discussions); the row then claims it, or the ref goes and the next is tried.
      HANGAR_ASSIGN_OR_RETURN(d.num,
                              git::CreatePullRequestRef(repo.git_path, *pr_head, highest + 1));
    } else {
      HANGAR_ASSIGN_OR_RETURN(int highest_ref, git::HighestPullRequestRef(repo.git_path));
      d.num = std::max(highest, highest_ref) + 1;
    }
    if (d.num > git::kMaxPullRequestNumber) break;
    auto made = store_.Create(d, events);
    if (made) {
      std::optional<DiscussionEventRecord> first;
      if (!events.empty() && events.front().kind == DiscussionEventKind::Comment &&
          !made->empty()) {
        first = events.front();
        first->id = made->front();
        first->repo_id = repo.record.id;
        first->num = d.num;
      }
      Tell(DiscussionChangeKind::Created, repo.record, d.num, std::move(first));
      return d.num;
    }
    if (pr_head) (void)git::DeleteRef(repo.git_path, PullRequestRef(d.num));
    if (made.error().code != ErrorCode::Conflict) return std::move(made).error();
  }
  return MakeError(ErrorCode::Conflict, "could not take a discussion number; retry");
}

Result<int> DiscussionService::Create(const Principal& who, const RepoId& id,
                                      const NewDiscussion& in) {
  HANGAR_TRY(CheckWriter(who));
  HANGAR_ASSIGN_OR_RETURN(std::string title, CheckTitle(in.title));
  HANGAR_TRY(CheckComment(in.description, true));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  const int64_t now = Now();
  DiscussionRecord d;
  d.repo_id = repo.record.id;
  d.pull_request = in.pull_request;
  d.title = std::move(title);
  d.author_id = who.user_id;
  d.author_name = who.name;
  d.created_at = now;
  std::vector<DiscussionEventRecord> events;
  if (!Blank(in.description)) {
    events.push_back(NewEvent(DiscussionEventKind::Comment, who, in.description, now));
  }
  std::optional<Oid> head;
  if (in.pull_request) {
    if (repo.record.is_mirror) {
      return MakeError(ErrorCode::Forbidden, id.Id() + " is a mirror: it takes no pull requests");
    }
    if (repo.access < Access::Write) {
      return MakeError(ErrorCode::Forbidden, "a pull request of " + id.Id() +
                                                 " takes commits from its writers only; open a "
                                                 "discussion instead");
    }
    d.status = DiscussionStatus::Draft;
    d.base_ref = "refs/heads/" + repo.record.default_branch;
    HANGAR_ASSIGN_OR_RETURN(head, content_.ResolveRevision(repo, d.base_ref));
    d.head_oid = head->Hex();
  }
  return Insert(repo, std::move(d), std::move(events), head);
}

Result<int> DiscussionService::OpenPullRequest(const Principal& who, const RepoHandle& repo,
                                               const std::string& base, const Oid& head,
                                               const std::string& title,
                                               const std::string& description) {
  const int64_t now = Now();
  DiscussionRecord d;
  d.repo_id = repo.record.id;
  d.pull_request = true;
  // A commit's summary may be longer than a title: cut at a character, not refused.
  auto t = CheckTitle(FirstCodePoints(TrimBlanks(title), kMaxDiscussionTitle));
  d.title = t ? *t : "Pull request from " + who.name;
  d.status = DiscussionStatus::Open;
  d.author_id = who.user_id;
  d.author_name = who.name;
  d.base_ref = "refs/heads/" + base;
  d.head_oid = head.Hex();
  d.created_at = now;
  std::vector<DiscussionEventRecord> events;
  if (!Blank(description) && CheckComment(description, true)) {
    events.push_back(NewEvent(DiscussionEventKind::Comment, who, description, now));
  }
  HANGAR_ASSIGN_OR_RETURN(auto commits, git::CommitsSince(repo.git_path, {}, head, 1));
  for (const auto& c : commits) {
    auto e = NewEvent(DiscussionEventKind::Commit, who, ShownText(c.subject), now);
    e.detail = c.id.Hex();
    events.push_back(std::move(e));
  }
  return Insert(repo, std::move(d), std::move(events), head);
}

Result<void> DiscussionService::CheckOpen(const RepoHandle& repo, int num) {
  HANGAR_ASSIGN_OR_RETURN(auto d, store_.Get(repo.record.id, num));
  // A refs/pr/<n> without a discussion predates discussions: it takes commits as before.
  if (!d) return {};
  if (!d->pull_request || !IsOpen(d->status)) {
    return Bad("pull request #" + std::to_string(num) + " is " +
               std::string(db::DiscussionStatusName(d->status)) + ": it takes no more commits");
  }
  return {};
}

Result<DiscussionService::Opened> DiscussionService::OpenForWrite(const Principal& who,
                                                                  const RepoId& id, int num) {
  HANGAR_TRY(CheckWriter(who));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  HANGAR_ASSIGN_OR_RETURN(auto d, store_.Get(repo.record.id, num));
  if (!d) return NoSuchDiscussion(num, id);
  const bool may_change =
      (d->author_id != 0 && d->author_id == who.user_id) || repo.access >= Access::Write;
  return Opened{std::move(repo), std::move(*d), may_change};
}

Result<DiscussionEventRecord> DiscussionService::EventAfter(int64_t repo_id, int num, int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto e, store_.Event(repo_id, num, id));
  if (!e) return MakeError(ErrorCode::Internal, "event " + std::to_string(id) + " vanished");
  return std::move(*e);
}

Result<DiscussionEventRecord> DiscussionService::Told(const db::RepoRecord& repo, int num,
                                                      int64_t id, DiscussionChangeKind kind) {
  HANGAR_ASSIGN_OR_RETURN(auto e, EventAfter(repo.id, num, id));
  bool about_comment =
      kind == DiscussionChangeKind::Commented || kind == DiscussionChangeKind::CommentUpdated;
  Tell(kind, repo, num, about_comment ? std::optional(e) : std::nullopt);
  return e;
}

void DiscussionService::Tell(DiscussionChangeKind kind, const db::RepoRecord& repo, int num,
                             std::optional<DiscussionEventRecord> comment) {
  if (listeners_.empty()) return;
  auto d = store_.Get(repo.id, num);
  if (!d || !*d) return;  // deleted meanwhile: nothing to tell
  DiscussionChange change{kind, repo, std::move(**d), std::move(comment)};
  for (const auto& listener : listeners_) listener(change);
}

Result<DiscussionEventRecord> DiscussionService::Comment(const Principal& who, const RepoId& id,
                                                         int num, const std::string& text) {
  HANGAR_TRY(CheckComment(text, false));
  HANGAR_ASSIGN_OR_RETURN(Opened o, OpenForWrite(who, id, num));
  if (o.discussion.comments >= kMaxDiscussionComments) {
    return Bad("discussion #" + std::to_string(num) + " has " +
               std::to_string(kMaxDiscussionComments) + " comments: open a new one");
  }
  const int64_t now = Now();
  HANGAR_ASSIGN_OR_RETURN(
      auto ids, store_.Update(o.repo.record.id, num, {},
                              {NewEvent(DiscussionEventKind::Comment, who, text, now)}, now));
  if (!ids) return NoSuchDiscussion(num, id);
  return Told(o.repo.record, num, ids->back(), DiscussionChangeKind::Commented);
}

Result<DiscussionEventRecord> DiscussionService::ChangeStatus(const Principal& who,
                                                              const RepoId& id, int num,
                                                              const std::string& status,
                                                              const std::string& comment) {
  auto to = db::ParseDiscussionStatus(status);
  if (!to || (*to != DiscussionStatus::Open && *to != DiscussionStatus::Closed)) {
    return Bad("status '" + status.substr(0, 40) + "' is not one of: open, closed");
  }
  HANGAR_TRY(CheckComment(comment, true));
  HANGAR_ASSIGN_OR_RETURN(Opened o, OpenForWrite(who, id, num));
  if (!o.may_change) {
    return MakeError(ErrorCode::Forbidden, "only its author or a writer of " + id.Id() +
                                               " may open or close discussion #" +
                                               std::to_string(num));
  }
  const DiscussionStatus from = o.discussion.status;
  if (from == DiscussionStatus::Merged) {
    return Bad("pull request #" + std::to_string(num) + " is merged: its status is final");
  }
  if (from == *to) return Bad("discussion #" + std::to_string(num) + " is " + status + " already");
  const int64_t now = Now();
  std::vector<DiscussionEventRecord> events;
  if (!Blank(comment)) {
    events.push_back(NewEvent(DiscussionEventKind::Comment, who, comment, now));
  }
  events.push_back(NewEvent(DiscussionEventKind::StatusChange, who, status, now));
  db::DiscussionUpdate u;
  u.status = *to;
  u.if_status = {from};
  HANGAR_ASSIGN_OR_RETURN(auto ids, store_.Update(o.repo.record.id, num, u, events, now));
  if (!ids) {
    return MakeError(ErrorCode::Conflict,
                     "discussion #" + std::to_string(num) + " changed meanwhile; reload and retry");
  }
  return Told(o.repo.record, num, ids->back(), DiscussionChangeKind::Updated);
}

Result<DiscussionEventRecord> DiscussionService::Rename(const Principal& who, const RepoId& id,
                                                        int num, const std::string& title) {
  HANGAR_ASSIGN_OR_RETURN(std::string t, CheckTitle(title));
  HANGAR_ASSIGN_OR_RETURN(Opened o, OpenForWrite(who, id, num));
  if (!o.may_change) {
    return MakeError(ErrorCode::Forbidden, "only its author or a writer of " + id.Id() +
                                               " may rename discussion #" + std::to_string(num));
  }
  if (t == o.discussion.title) return Bad("discussion #" + std::to_string(num) + " has that title");
  const int64_t now = Now();
  auto e = NewEvent(DiscussionEventKind::TitleChange, who, t, now);
  e.detail = o.discussion.title;
  db::DiscussionUpdate u;
  u.title = std::move(t);
  HANGAR_ASSIGN_OR_RETURN(auto ids, store_.Update(o.repo.record.id, num, u, {e}, now));
  if (!ids) return NoSuchDiscussion(num, id);
  return Told(o.repo.record, num, ids->back(), DiscussionChangeKind::Updated);
}

Result<DiscussionEventRecord> DiscussionService::Merge(const Principal& who, const RepoId& id,
                                                       int num, const std::string& comment) {
  HANGAR_TRY(CheckWriter(who));
  HANGAR_TRY(CheckComment(comment, true));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto d, store_.Get(repo.record.id, num));
  if (!d) return NoSuchDiscussion(num, id);
  const std::string what = "pull request #" + std::to_string(num);
  if (!d->pull_request) return Bad("discussion #" + std::to_string(num) + " is not a pull request");
  if (!IsOpen(d->status)) {
    return Bad(what + " is " + std::string(db::DiscussionStatusName(d->status)) +
               ": only an open pull request merges");
  }
  HANGAR_ASSIGN_OR_RETURN(Oid base, content_.ResolveRevision(repo, d->base_ref));
  auto head = content_.ResolveRevision(repo, PullRequestRef(num));
  if (!head)
    return MakeError(ErrorCode::Conflict,
                     what + " has no commits: refs/pr/" + std::to_string(num) + " is gone");
  HANGAR_ASSIGN_OR_RETURN(auto check, git::CheckMerge(repo.git_path, base, *head));
  if (check.up_to_date) {
    return Bad(what + " has nothing to merge: its commits are all in " + d->base_ref);
  }
  std::string message = "Merge " + what + ": " + d->title + "\n";
  git::Signature sig{who.name, who.name + "@users.noreply.hangar", Now(), 0};
  HANGAR_ASSIGN_OR_RETURN(Oid merged,
                          git::MergeInto(repo.git_path, d->base_ref, base, *head, sig, message));
  // The base branch moved: its listeners (metadata, webhooks, this service's commit events)
  // hear it as a push.
  repos_.AfterPush(repo);
  const int64_t now = Now();
  std::vector<DiscussionEventRecord> events;
  if (!Blank(comment)) {
    events.push_back(NewEvent(DiscussionEventKind::Comment, who, comment, now));
  }
  events.push_back(NewEvent(DiscussionEventKind::StatusChange, who, "merged", now));
  db::DiscussionUpdate u;
  u.status = DiscussionStatus::Merged;
  u.merge_oid = merged.Hex();
  u.base_oid = base.Hex();
  u.head_oid = head->Hex();
  // The branch has moved: whatever happened to the row meanwhile, it is merged now.
  HANGAR_ASSIGN_OR_RETURN(auto ids, store_.Update(repo.record.id, num, u, events, now));
  if (!ids) return NoSuchDiscussion(num, id);
  return Told(repo.record, num, ids->back(), DiscussionChangeKind::Updated);
}

Result<DiscussionEvent> DiscussionService::EditComment(const Principal& who, const RepoId& id,
                                                       int num, int64_t event_id,
                                                       const std::string& text) {
  HANGAR_TRY(CheckComment(text, false));
  HANGAR_ASSIGN_OR_RETURN(Opened o, OpenForWrite(who, id, num));
  HANGAR_ASSIGN_OR_RETURN(auto e, store_.Event(o.repo.record.id, num, event_id));
  if (!e || e->kind != DiscussionEventKind::Comment) {
    return MakeError(ErrorCode::NotFound,
                     "comment not found in discussion #" + std::to_string(num));
  }
  if (e->author_id == 0 || e->author_id != who.user_id) {
    return MakeError(ErrorCode::Forbidden, "only its author may edit a comment");
  }
  HANGAR_TRY(store_.EditComment(event_id, text, who.name, Now()));
  DiscussionEvent out;
  HANGAR_ASSIGN_OR_RETURN(out.record,
                          Told(o.repo.record, num, event_id, DiscussionChangeKind::CommentUpdated));
  HANGAR_ASSIGN_OR_RETURN(out.versions, store_.Versions(event_id));
  return out;
}

Result<DiscussionEventRecord> DiscussionService::HideComment(const Principal& who, const RepoId& id,
                                                             int num, int64_t event_id) {
  HANGAR_ASSIGN_OR_RETURN(Opened o, OpenForWrite(who, id, num));
  HANGAR_ASSIGN_OR_RETURN(auto e, store_.Event(o.repo.record.id, num, event_id));
  if (!e || e->kind != DiscussionEventKind::Comment) {
    return MakeError(ErrorCode::NotFound,
                     "comment not found in discussion #" + std::to_string(num));
  }
  const bool own = e->author_id != 0 && e->author_id == who.user_id;
  if (!own && o.repo.access < Access::Write) {
    return MakeError(ErrorCode::Forbidden,
                     "only its author or a writer of " + id.Id() + " may hide a comment");
  }
  if (e->hidden) return std::move(*e);
  HANGAR_TRY(store_.HideComment(event_id, Now()));
  return Told(o.repo.record, num, event_id, DiscussionChangeKind::CommentUpdated);
}

Result<void> DiscussionService::RecordCommits(const RepoHandle& repo, const DiscussionRecord& d,
                                              const Oid& head) {
  // Its new commits: not reachable from where it was, nor from its base branch (after a
  // history rewrite its old head is gone, and the base's commits are not its own).
  std::vector<Oid> hide;
  if (auto old = Oid::ParseHex(d.head_oid)) hide.push_back(*old);
  if (auto base = content_.ResolveRevision(repo, d.base_ref)) hide.push_back(*base);
  HANGAR_ASSIGN_OR_RETURN(auto commits,
                          git::CommitsSince(repo.git_path, hide, head, kMaxCommitEvents));
  const int64_t now = Now();
  std::vector<DiscussionEventRecord> events;
  for (const auto& c : commits) {
    DiscussionEventRecord e;
    e.kind = DiscussionEventKind::Commit;
    // Found in git, not typed in a form: made fit to show, whatever bytes a push brought.
    e.author_name = ShownText(c.author.name);
    e.body = ShownText(c.subject);
    e.detail = c.id.Hex();
    e.created_at = e.updated_at = now;
    events.push_back(std::move(e));
  }
  db::DiscussionUpdate u;
  u.head_oid = head.Hex();
  u.if_head_oid = d.head_oid;  // another replica recorded it already: nothing twice
  if (d.status == DiscussionStatus::Draft && !commits.empty()) u.status = DiscussionStatus::Open;
  HANGAR_TRY(store_.Update(d.repo_id, d.num, u, events, now));
  return {};
}

void DiscussionService::AfterPush(const RepoHandle& repo) {
  auto prs = store_.OpenPullRequests(repo.record.id);
  if (!prs) {
    Log("services")
        ->warn("repo {}: pull requests not read: {}", repo.record.Id().UrlPath(),
               prs.error().message);
    return;
  }
  for (const auto& d : *prs) {
    auto head = content_.ResolveRevision(repo, PullRequestRef(d.num));
    if (!head || head->Hex() == d.head_oid) continue;
    if (auto r = RecordCommits(repo, d, *head); !r) {
      Log("services")
          ->warn("repo {}: commits of pull request #{} not recorded: {}",
                 repo.record.Id().UrlPath(), d.num, r.error().message);
    }
  }
}

}  // namespace hangar::services

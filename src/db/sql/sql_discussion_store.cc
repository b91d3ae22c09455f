#include "db/sql/sql_discussion_store.h"

#include <algorithm>

namespace hangar::db {

std::string_view DiscussionStatusName(DiscussionStatus s) {
  switch (s) {
    case DiscussionStatus::Open:
      return "open";
    case DiscussionStatus::Closed:
      return "closed";
    case DiscussionStatus::Merged:
      return "merged";
    case DiscussionStatus::Draft:
      return "draft";
  }
  return "open";
}

std::optional<DiscussionStatus> ParseDiscussionStatus(std::string_view s) {
  if (s == "open") return DiscussionStatus::Open;
  if (s == "closed") return DiscussionStatus::Closed;
  if (s == "merged") return DiscussionStatus::Merged;
  if (s == "draft") return DiscussionStatus::Draft;
  return std::nullopt;
}

std::string_view DiscussionEventKindName(DiscussionEventKind k) {
  switch (k) {
    case DiscussionEventKind::Comment:
      return "comment";
    case DiscussionEventKind::StatusChange:
      return "status-change";
    case DiscussionEventKind::TitleChange:
      return "title-change";
    case DiscussionEventKind::Commit:
      return "commit";
  }
  return "comment";
}

namespace {

DiscussionEventKind ParseKind(std::string_view s) {
  if (s == "status-change") return DiscussionEventKind::StatusChange;
  if (s == "title-change") return DiscussionEventKind::TitleChange;
  if (s == "commit") return DiscussionEventKind::Commit;
  return DiscussionEventKind::Comment;
}

constexpr const char kSelect[] =
    "SELECT d.repo_id, d.num, d.pull_request, d.title, d.status, d.author_id, d.author_name, "
    "d.base_ref, d.head_oid, d.merge_oid, d.created_at, d.updated_at, d.base_oid, (SELECT "
    "COUNT(*) FROM "
    "discussion_events e WHERE e.repo_id = d.repo_id AND e.num = d.num AND e.kind = 'comment') "
    "FROM discussions d ";

DiscussionRecord ReadRow(const Stmt& s) {
  DiscussionRecord d;
  d.repo_id = s.Int(0);
  d.num = static_cast<int>(s.Int(1));
  d.pull_request = s.Int(2) != 0;
  d.title = s.Text(3);
  d.status = ParseDiscussionStatus(s.Text(4)).value_or(DiscussionStatus::Open);
  d.author_id = s.OptInt(5).value_or(0);
  d.author_name = s.Text(6);
  d.base_ref = s.Text(7);
  d.head_oid = s.Text(8);
  d.merge_oid = s.Text(9);
  d.created_at = s.Int(10);
  d.updated_at = s.Int(11);
  d.base_oid = s.Text(12);
  d.comments = s.Int(13);
  return d;
}

Result<std::vector<DiscussionRecord>> ReadAll(Stmt& s) {
  std::vector<DiscussionRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadRow(s));
  }
}

constexpr const char kSelectEvent[] =
    "SELECT id, repo_id, num, kind, author_id, author_name, body, detail, edited, hidden, "
    "editor_name, created_at, updated_at FROM discussion_events ";

DiscussionEventRecord ReadEvent(const Stmt& s) {
  DiscussionEventRecord e;
  e.id = s.Int(0);
  e.repo_id = s.Int(1);
  e.num = static_cast<int>(s.Int(2));
  e.kind = ParseKind(s.Text(3));
  e.author_id = s.OptInt(4).value_or(0);
  e.author_name = s.Text(5);
  e.body = s.Text(6);
  e.detail = s.Text(7);
  e.edited = s.Int(8) != 0;
  e.hidden = s.Int(9) != 0;
  e.editor_name = s.Text(10);
  e.created_at = s.Int(11);
  e.updated_at = s.Int(12);
  return e;
}

// The WHERE terms of `f` after "d.repo_id = ?"; bound by BindFilter from index 2.
std::string FilterSql(const DiscussionFilter& f) {
  std::string sql;
  if (f.pull_request) sql += " AND d.pull_request = ?";
  if (f.open) {
    sql += *f.open ? " AND d.status IN ('open', 'draft')" : " AND d.status IN ('closed', 'merged')";
  }
  if (!f.author.empty()) sql += " AND d.author_name = ?";
  return sql;
}

int BindFilter(Stmt& s, int i, const DiscussionFilter& f) {
  if (f.pull_request) s.Bind(i++, int64_t{*f.pull_request ? 1 : 0});
  if (!f.author.empty()) s.Bind(i++, f.author);
  return i;
}

// Inserts `e` for discussion (repo_id, num), and a comment's first version. Returns its id.
Result<int64_t> InsertEvent(Connection& c, int64_t repo_id, int num,
                            const DiscussionEventRecord& e) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c.Prepare("INSERT INTO discussion_events (repo_id, num, kind, author_id, "
                        "author_name, body, detail, editor_name, created_at, updated_at) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  s.Bind(1, repo_id).Bind(2, int64_t{num}).Bind(3, DiscussionEventKindName(e.kind));
  if (e.author_id) {
    s.Bind(4, e.author_id);
  } else {
    s.BindNull(4);
  }
  s.Bind(5, e.author_name).Bind(6, e.body).Bind(7, e.detail).Bind(8, e.author_name);
  s.Bind(9, e.created_at).Bind(10, e.created_at);
  HANGAR_TRY(s.Run());
  HANGAR_ASSIGN_OR_RETURN(int64_t id, c.LastInsertId());
  if (e.kind == DiscussionEventKind::Comment) {
    HANGAR_ASSIGN_OR_RETURN(
        auto v, c.Prepare("INSERT INTO comment_versions (event_id, version, body, author_name, "
                          "created_at) VALUES (?, 1, ?, ?, ?)"));
    HANGAR_TRY(v.Bind(1, id).Bind(2, e.body).Bind(3, e.author_name).Bind(4, e.created_at).Run());
  }
  return id;
}

Result<std::vector<int64_t>> InsertEvents(Connection& c, int64_t repo_id, int num,
                                          const std::vector<DiscussionEventRecord>& events) {
  std::vector<int64_t> ids;
  for (const auto& e : events) {
    HANGAR_ASSIGN_OR_RETURN(int64_t id, InsertEvent(c, repo_id, num, e));
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

Result<std::vector<int64_t>> SqlDiscussionStore::Create(
    const DiscussionRecord& d, const std::vector<DiscussionEventRecord>& events) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<std::vector<int64_t>> {
    // INSERT … SELECT: a repo gone meanwhile inserts nothing (no FK error).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO discussions (repo_id, num, pull_request, title, status, "
                           "author_id, author_name, base_ref, head_oid, merge_oid, created_at, "
                           "updated_at) SELECT r.id, ?, ?, ?, ?, (SELECT u.id FROM users u WHERE "
                           "u.id = ?), ?, ?, ?, '', ?, ? FROM repos r WHERE r.id = ?"));
    s.Bind(1, int64_t{d.num})
        .Bind(2, int64_t{d.pull_request ? 1 : 0})
        .Bind(3, d.title)
        .Bind(4, DiscussionStatusName(d.status))
        .Bind(5, d.author_id)
        .Bind(6, d.author_name)
        .Bind(7, d.base_ref)
        .Bind(8, d.head_oid)
        .Bind(9, d.created_at)
        .Bind(10, d.created_at)
        .Bind(11, d.repo_id);
    HANGAR_TRY(s.Run());
    if (c->Changes() == 0) {
      return MakeError(ErrorCode::NotFound,
                       "repository #" + std::to_string(d.repo_id) + " not found");
    }
    return InsertEvents(*c, d.repo_id, d.num, events);
  });
}

Result<int> SqlDiscussionStore::HighestNum(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT MAX(num) FROM discussions WHERE repo_id = ?"));
  s.Bind(1, repo_id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? static_cast<int>(s.OptInt(0).value_or(0)) : 0;
}

Result<std::optional<DiscussionRecord>> SqlDiscussionStore::Get(int64_t repo_id, int num) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare(std::string(kSelect) + "WHERE d.repo_id = ? AND d.num = ?"));
  s.Bind(1, repo_id).Bind(2, int64_t{num});
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<DiscussionRecord>();
  return std::optional<DiscussionRecord>(ReadRow(s));
}

Result<std::vector<DiscussionRecord>> SqlDiscussionStore::List(int64_t repo_id,
                                                               const DiscussionFilter& filter,
                                                               int offset, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelect) + "WHERE d.repo_id = ?" + FilterSql(filter) +
                         " ORDER BY d.num DESC LIMIT ? OFFSET ?"));
  int i = BindFilter(s.Bind(1, repo_id), 2, filter);
  s.Bind(i, int64_t{limit}).Bind(i + 1, int64_t{offset});
  return ReadAll(s);
}

Result<int64_t> SqlDiscussionStore::Count(int64_t repo_id, const DiscussionFilter& filter) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT COUNT(*) FROM discussions d WHERE "
                                             "d.repo_id = ?" +
                                             FilterSql(filter)));
  BindFilter(s.Bind(1, repo_id), 2, filter);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::vector<DiscussionRecord>> SqlDiscussionStore::OpenPullRequests(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelect) +
                         "WHERE d.repo_id = ? AND d.pull_request = 1 AND d.status IN ('open', "
                         "'draft') ORDER BY d.num"));
  s.Bind(1, repo_id);
  return ReadAll(s);
}

Result<std::vector<DiscussionEventRecord>> SqlDiscussionStore::Events(int64_t repo_id, int num) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelectEvent) + "WHERE repo_id = ? AND num = ? ORDER BY id"));
  s.Bind(1, repo_id).Bind(2, int64_t{num});
  std::vector<DiscussionEventRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadEvent(s));
  }
}

Result<std::optional<DiscussionEventRecord>> SqlDiscussionStore::Event(int64_t repo_id, int num,
                                                                       int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelectEvent) + "WHERE repo_id = ? AND num = ? AND id = ?"));
  s.Bind(1, repo_id).Bind(2, int64_t{num}).Bind(3, id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<DiscussionEventRecord>();
  return std::optional<DiscussionEventRecord>(ReadEvent(s));
}

Result<std::vector<CommentVersion>> SqlDiscussionStore::Versions(int64_t event_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT body, author_name, created_at FROM comment_versions WHERE "
                         "event_id = ? ORDER BY version DESC"));
  s.Bind(1, event_id);
  std::vector<CommentVersion> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(CommentVersion{s.Text(0), s.Text(1), s.Int(2)});
  }
}

Result<std::optional<std::vector<int64_t>>> SqlDiscussionStore::Update(
    int64_t repo_id, int num, const DiscussionUpdate& u,
    const std::vector<DiscussionEventRecord>& events, int64_t now) {
  using Out = std::optional<std::vector<int64_t>>;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<Out> {
    HANGAR_ASSIGN_OR_RETURN(
        auto read, c->Prepare("SELECT status, head_oid FROM discussions WHERE repo_id = ? AND "
                              "num = ?"));
    read.Bind(1, repo_id).Bind(2, int64_t{num});
    HANGAR_ASSIGN_OR_RETURN(bool found, read.Step());
    if (!found) {
      return MakeError(ErrorCode::NotFound, "discussion #" + std::to_string(num) + " not found");
    }
    auto status = ParseDiscussionStatus(read.Text(0));
    std::string head = read.Text(1);
    if (!u.if_status.empty() &&
        std::find(u.if_status.begin(), u.if_status.end(), status) == u.if_status.end()) {
      return Out();
    }
    if (u.if_head_oid && *u.if_head_oid != head) return Out();
    // Each field keeps its value unless the update names it (COALESCE of a NULL bind).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE discussions SET status = COALESCE(?, status), title = "
                           "COALESCE(?, title), head_oid = COALESCE(?, head_oid), merge_oid = "
                           "COALESCE(?, merge_oid), base_oid = COALESCE(?, base_oid), updated_at "
                           "= ? WHERE repo_id = ? AND num = ?"));
    s.Bind(1, u.status ? std::optional<std::string>(std::string(DiscussionStatusName(*u.status)))
                       : std::nullopt)
        .Bind(2, u.title)
        .Bind(3, u.head_oid)
        .Bind(4, u.merge_oid)
        .Bind(5, u.base_oid)
        .Bind(6, now)
        .Bind(7, repo_id)
        .Bind(8, int64_t{num});
    HANGAR_TRY(s.Run());
    HANGAR_ASSIGN_OR_RETURN(auto ids, InsertEvents(*c, repo_id, num, events));
    return Out(std::move(ids));
  });
}

Result<void> SqlDiscussionStore::EditComment(int64_t event_id, std::string_view body,
                                             std::string_view editor, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(
        auto read, c->Prepare("SELECT hidden FROM discussion_events WHERE id = ? AND kind = "
                              "'comment'"));
    read.Bind(1, event_id);
    HANGAR_ASSIGN_OR_RETURN(bool found, read.Step());
    if (!found) return MakeError(ErrorCode::NotFound, "comment not found");
    if (read.Int(0) != 0) return MakeError(ErrorCode::Conflict, "the comment is hidden");
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE discussion_events SET body = ?, edited = 1, editor_name = ?, "
                           "updated_at = ? WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, body).Bind(2, editor).Bind(3, now).Bind(4, event_id).Run());
    HANGAR_ASSIGN_OR_RETURN(
        auto v, c->Prepare("INSERT INTO comment_versions (event_id, version, body, author_name, "
                           "created_at) SELECT ?, COALESCE(MAX(version), 0) + 1, ?, ?, ? FROM "
                           "comment_versions WHERE event_id = ?"));
    return v.Bind(1, event_id).Bind(2, body).Bind(3, editor).Bind(4, now).Bind(5, event_id).Run();
  });
}

Result<void> SqlDiscussionStore::HideComment(int64_t event_id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE discussion_events SET body = '', hidden = 1, updated_at = ? "
                           "WHERE id = ? AND kind = 'comment'"));
    HANGAR_TRY(s.Bind(1, now).Bind(2, event_id).Run());
    if (c->Changes() == 0) return MakeError(ErrorCode::NotFound, "comment not found");
    HANGAR_ASSIGN_OR_RETURN(auto v, c->Prepare("DELETE FROM comment_versions WHERE event_id = ?"));
    return v.Bind(1, event_id).Run();
  });
}

}  // namespace hangar::db

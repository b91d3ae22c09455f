#include "db/sql/sql_gate_store.h"

#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kSelect[] =
    "SELECT a.repo_id, a.user_id, a.status, a.fields, a.reason, a.granted, a.created_at, "
    "a.updated_at, u.name, u.fullname, u.email FROM access_requests a JOIN users u ON u.id = "
    "a.user_id ";

AccessRequestRecord ReadRow(const Stmt& s) {
  AccessRequestRecord r;
  r.repo_id = s.Int(0);
  r.user_id = s.Int(1);
  r.status = ParseAccessStatus(s.Text(2)).value_or(AccessStatus::Pending);
  r.fields = s.Text(3);
  r.reason = s.Text(4);
  r.granted = s.Int(5) != 0;
  r.created_at = s.Int(6);
  r.updated_at = s.Int(7);
  r.user_name = s.Text(8);
  r.user_fullname = s.Text(9);
  r.user_email = s.Text(10);
  return r;
}

Result<std::optional<AccessRequestRecord>> Find(Connection& c, int64_t repo_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c.Prepare(std::string(kSelect) + "WHERE a.repo_id = ? AND a.user_id = ?"));
  s.Bind(1, repo_id).Bind(2, user_id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<AccessRequestRecord>();
  return std::optional<AccessRequestRecord>(ReadRow(s));
}

Error Gone(int64_t repo_id, int64_t user_id) {
  return MakeError(ErrorCode::NotFound, "repository #" + std::to_string(repo_id) + " or user #" +
                                            std::to_string(user_id) + " not found");
}

}  // namespace

std::string_view AccessStatusName(AccessStatus s) {
  switch (s) {
    case AccessStatus::Accepted:
      return "accepted";
    case AccessStatus::Rejected:
      return "rejected";
    case AccessStatus::Pending:
      break;
  }
  return "pending";
}

std::optional<AccessStatus> ParseAccessStatus(std::string_view s) {
  if (s == "pending") return AccessStatus::Pending;
  if (s == "accepted") return AccessStatus::Accepted;
  if (s == "rejected") return AccessStatus::Rejected;
  return std::nullopt;
}

Result<std::optional<AccessRequestRecord>> SqlGateStore::Get(int64_t repo_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return Find(*c, repo_id, user_id);
}

Result<std::pair<AccessRequestRecord, bool>> SqlGateStore::Insert(const AccessRequestRecord& r) {
  const int64_t created = r.created_at != 0 ? r.created_at : NowUnix();
  const int64_t updated = r.updated_at != 0 ? r.updated_at : created;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<std::pair<AccessRequestRecord, bool>> {
    // INSERT … SELECT: a repo or user gone meanwhile inserts nothing (no FK error), and an
    // existing request stays as it is.
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO access_requests (repo_id, user_id, status, fields, "
                           "reason, granted, created_at, updated_at) SELECT r.id, u.id, ?, ?, "
                           "?, ?, ?, ? FROM repos r, users u WHERE r.id = ? AND u.id = ? "
                           "ON CONFLICT (repo_id, user_id) DO NOTHING"));
    HANGAR_TRY(s.Bind(1, AccessStatusName(r.status))
                   .Bind(2, r.fields)
                   .Bind(3, r.reason)
                   .Bind(4, int64_t{r.granted ? 1 : 0})
                   .Bind(5, created)
                   .Bind(6, updated)
                   .Bind(7, r.repo_id)
                   .Bind(8, r.user_id)
                   .Run());
    const bool inserted = c->Changes() > 0;
    HANGAR_ASSIGN_OR_RETURN(auto stored, Find(*c, r.repo_id, r.user_id));
    if (!stored) return Gone(r.repo_id, r.user_id);
    return std::make_pair(std::move(*stored), inserted);
  });
}

Result<void> SqlGateStore::SetStatus(int64_t repo_id, int64_t user_id, AccessStatus status,
                                     std::string_view reason, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE access_requests SET status = ?, reason = ?, "
                                             "updated_at = ? WHERE repo_id = ? AND user_id = ?"));
  HANGAR_TRY(s.Bind(1, AccessStatusName(status))
                 .Bind(2, reason)
                 .Bind(3, now)
                 .Bind(4, repo_id)
                 .Bind(5, user_id)
                 .Run());
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::NotFound, "no access request of user #" + std::to_string(user_id));
  }
  return {};
}

Result<void> SqlGateStore::Grant(int64_t repo_id, int64_t user_id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO access_requests (repo_id, user_id, status, granted, "
                         "created_at, updated_at) SELECT r.id, u.id, 'accepted', 1, ?, ? FROM "
                         "repos r, users u WHERE r.id = ? AND u.id = ? ON CONFLICT (repo_id, "
                         "user_id) DO UPDATE SET status = 'accepted', reason = '', updated_at = "
                         "excluded.updated_at"));
  HANGAR_TRY(s.Bind(1, now).Bind(2, now).Bind(3, repo_id).Bind(4, user_id).Run());
  if (c->Changes() == 0) return Gone(repo_id, user_id);
  return {};
}

Result<std::vector<AccessRequestRecord>> SqlGateStore::List(int64_t repo_id, AccessStatus status,
                                                            int64_t after_created_at,
                                                            int64_t after_user, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelect) +
                         "WHERE a.repo_id = ? AND a.status = ? AND (a.created_at > ? OR "
                         "(a.created_at = ? AND a.user_id > ?)) ORDER BY a.created_at, "
                         "a.user_id LIMIT ?"));
  s.Bind(1, repo_id)
      .Bind(2, AccessStatusName(status))
      .Bind(3, after_created_at)
      .Bind(4, after_created_at)
      .Bind(5, after_user)
      .Bind(6, int64_t{limit});
  std::vector<AccessRequestRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadRow(s));
  }
}

}  // namespace hangar::db

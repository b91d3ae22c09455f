#include "services/repo/gate_service.h"

#include <boost/json.hpp>

#include "core/util.h"

namespace hangar::services {

namespace {

constexpr size_t kMaxFields = 20;
constexpr size_t kMaxFieldName = 100;
constexpr size_t kMaxFieldValue = 2000;
constexpr size_t kMaxReason = 2000;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

// `text` (a form field, a rejection's reason) is shown to others — on pages, in git's
// error lines on their terminals: valid UTF-8 without control characters. Errors:
// BadRequest naming `what`.
Result<void> CheckShownText(const std::string& what, std::string_view text) {
  if (auto problem = ShownTextProblem(text)) return Bad(what + " " + std::string(*problem));
  return {};
}

// "<created_at>_<user_id>" (KeysetCursor): where a page ends; "" = before the first row.
// Errors: BadRequest.
Result<std::pair<int64_t, int64_t>> ParseCursor(const std::string& cursor) {
  if (cursor.empty()) return std::make_pair(int64_t{-1}, int64_t{0});
  auto parsed = ParseKeysetCursor(cursor);
  if (!parsed) return Bad("malformed cursor");
  return *parsed;
}

}  // namespace

GateService::GateService(RepoService& repos, db::GateStore& gates, db::UserStore& users)
    : repos_(repos), gates_(gates), users_(users) {}

Result<db::AccessRequestRecord> GateService::Ask(const Principal& who, const RepoId& id,
                                                 const GateFields& fields) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to ask for access");
  if (who.deploy_key_id != 0 || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a key bound to one repo cannot ask for access");
  }
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
  if (repo.record.gated.empty()) return Bad(id.Id() + " is not gated: its files are open to you");
  if (fields.size() > kMaxFields) return Bad("at most 20 fields");
  boost::json::object form;
  for (const auto& [name, value] : fields) {
    if (name.empty() || name.size() > kMaxFieldName) return Bad("a field's name is 1 to 100 bytes");
    HANGAR_TRY(CheckShownText("a field's name", name));
    if (value.size() > kMaxFieldValue) return Bad("field '" + name + "' is over 2000 bytes");
    HANGAR_TRY(CheckShownText("field '" + name + "'", value));
    form[name] = value;
  }
  // A member passes the gate as it is: nothing to ask.
  if (auto passes = repos_.CheckGate(who, repo.record); passes) {
    auto mine = gates_.Get(repo.record.id, who.user_id);
    if (mine && *mine && (*mine)->status == db::AccessStatus::Accepted) return **mine;
    return Bad("you have access to " + id.Id() + " already");
  }
  db::AccessRequestRecord r;
  r.repo_id = repo.record.id;
  r.user_id = who.user_id;
  r.status = repo.record.gated == "auto" ? db::AccessStatus::Accepted : db::AccessStatus::Pending;
  r.fields = form.empty() ? std::string() : boost::json::serialize(form);
  HANGAR_ASSIGN_OR_RETURN(auto stored, gates_.Insert(r));
  if (!stored.second && repo.record.gated == "auto" &&
      stored.first.status == db::AccessStatus::Pending) {
    // Asked while the gate was manual, which it no longer is: nobody is left to review it.
    HANGAR_TRY(
        gates_.SetStatus(repo.record.id, who.user_id, db::AccessStatus::Accepted, "", NowUnix()));
    stored.first.status = db::AccessStatus::Accepted;
  }
  return stored.first;
}

Result<std::optional<db::AccessRequestRecord>> GateService::RequestOf(const Principal& who,
                                                                      const db::RepoRecord& repo) {
  if (who.anonymous || who.user_id == 0) return std::optional<db::AccessRequestRecord>();
  return gates_.Get(repo.id, who.user_id);
}

Result<RepoHandle> GateService::OpenGated(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Write));
  if (repo.record.gated.empty()) return Bad(id.Id() + " is not gated");
  return repo;
}

Result<AccessRequestPage> GateService::List(const Principal& who, const RepoId& id,
                                            db::AccessStatus status, const std::string& cursor,
                                            int limit) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, OpenGated(who, id));
  HANGAR_ASSIGN_OR_RETURN(auto after, ParseCursor(cursor));
  limit = std::clamp(limit, 1, 1000);
  AccessRequestPage page;
  // One row more than the page says whether another page follows.
  HANGAR_ASSIGN_OR_RETURN(
      page.items, gates_.List(repo.record.id, status, after.first, after.second, limit + 1));
  if (static_cast<int>(page.items.size()) > limit) {
    page.items.resize(limit);
    const auto& last = page.items.back();
    page.next_cursor = KeysetCursor(last.created_at, last.user_id);
  }
  return page;
}

Result<void> GateService::Handle(const Principal& who, const RepoId& id, const std::string& user,
                                 db::AccessStatus status, const std::string& reason) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, OpenGated(who, id));
  if (!reason.empty() && status != db::AccessStatus::Rejected)
    return Bad("a reason is given only when rejecting a request");
  if (reason.size() > kMaxReason) return Bad("the reason is over 2000 bytes");
  HANGAR_TRY(CheckShownText("the reason", reason));
  HANGAR_ASSIGN_OR_RETURN(db::UserRecord target, users_.FindUserByName(user));
  HANGAR_ASSIGN_OR_RETURN(auto request, gates_.Get(repo.record.id, target.id));
  if (!request) {
    return MakeError(ErrorCode::NotFound, user + " has no access request on " + id.Id());
  }
  if (request->status == status) {
    return MakeError(ErrorCode::NotFound, user + "'s request is already in the " +
                                              std::string(db::AccessStatusName(status)) + " list");
  }
  return gates_.SetStatus(repo.record.id, target.id, status, reason, NowUnix());
}

Result<void> GateService::Grant(const Principal& who, const RepoId& id, const std::string& user) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, OpenGated(who, id));
  HANGAR_ASSIGN_OR_RETURN(db::UserRecord target, users_.FindUserByName(user));
  HANGAR_ASSIGN_OR_RETURN(auto request, gates_.Get(repo.record.id, target.id));
  if (request && request->status == db::AccessStatus::Accepted)
    return Bad(user + " has access to " + id.Id() + " already");
  const Principal as_target =
      Principal::User(target.id, target.name, target.is_admin, TokenRole::Read, "");
  if (repos_.CheckGate(as_target, repo.record)) {
    return Bad(user + " has access to " + id.Id() + " already (a member of its namespace)");
  }
  return gates_.Grant(repo.record.id, target.id, NowUnix());
}

}  // namespace hangar::services

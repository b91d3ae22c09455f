#include "services/auth/session_service.h"

#include "core/log.h"
#include "core/sha256.h"
#include "core/util.h"

namespace hangar::services {
namespace {

constexpr size_t kCookieLength = 64;
constexpr size_t kMaxCookieLength = 256;
constexpr int64_t kSweepIntervalSeconds = 3600;

// A session acts with the user's full rights, as a write token would.
Principal PrincipalOf(const db::UserRecord& user) {
  Principal p = Principal::User(user.id, user.name, user.is_admin, TokenRole::Write, "web session");
  p.session = true;
  return p;
}

}  // namespace

SessionService::SessionService(db::UserStore& users, AccountService& accounts,
                               SessionOptions options)
    : users_(users), accounts_(accounts), options_(std::move(options)) {}

int64_t SessionService::Now() const { return options_.now ? options_.now() : NowUnix(); }

Result<NewSession> SessionService::Login(std::string_view user, std::string_view password) {
  if (user.empty() || password.empty())
    return MakeError(ErrorCode::BadRequest, "user name and password are required");
  HANGAR_ASSIGN_OR_RETURN(auto rec, accounts_.CheckPassword(user, password));
  NewSession out;
  out.cookie = RandomAlnum(kCookieLength);
  db::SessionRecord row;
  row.id_sha256 = Sha256::Of(out.cookie).Hex();
  row.user_id = rec.id;
  row.csrf = RandomHex(32);
  row.created_at = Now();
  row.expires_at = row.created_at + options_.ttl_seconds;
  HANGAR_TRY(users_.CreateSession(row));
  int64_t last = last_sweep_.load();
  if (row.created_at - last >= kSweepIntervalSeconds &&
      last_sweep_.compare_exchange_strong(last, row.created_at)) {
    if (auto swept = Sweep(); !swept) Log("auth")->warn("session sweep: {}", swept.error().message);
  }
  out.session.principal = PrincipalOf(rec);
  out.session.csrf = row.csrf;
  out.session.expires_at = row.expires_at;
  return out;
}

Result<std::optional<Session>> SessionService::Find(std::string_view cookie) {
  if (cookie.empty() || cookie.size() > kMaxCookieLength) return std::optional<Session>();
  const std::string key = Sha256::Of(cookie).Hex();
  auto row = users_.FindSession(key);
  if (!row) {
    if (row.error().code == ErrorCode::NotFound) return std::optional<Session>();
    return std::move(row).error();
  }
  if (row->expires_at <= Now()) {
    HANGAR_TRY(users_.DeleteSession(key));
    return std::optional<Session>();
  }
  auto user = users_.FindUserById(row->user_id);
  if (!user) {
    if (user.error().code == ErrorCode::NotFound) return std::optional<Session>();
    return std::move(user).error();
  }
  Session s;
  s.principal = PrincipalOf(*user);
  s.csrf = row->csrf;
  s.expires_at = row->expires_at;
  return std::optional<Session>(std::move(s));
}

Result<void> SessionService::Logout(std::string_view cookie) {
  if (cookie.empty() || cookie.size() > kMaxCookieLength) return {};
  return users_.DeleteSession(Sha256::Of(cookie).Hex());
}

Result<int64_t> SessionService::Sweep() { return users_.DeleteExpiredSessions(Now()); }

}  // namespace hangar::services

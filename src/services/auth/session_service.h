#pragma once
// SessionService: browser sign-in for the web UI (issue #4 "login/logout"). A session is a
// random cookie value whose SHA-256 names a sessions row; each session carries its own
// CSRF token, which every form of the signed-in user must send back.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "core/result.h"
#include "db/user_store.h"
#include "services/auth/account_service.h"

namespace hangar::services {

struct SessionOptions {
  int64_t ttl_seconds = 14 * 24 * 3600;  // a session lives this long after sign-in
  std::function<int64_t()> now;          // unix seconds; defaults to NowUnix
};

// A live session: who it signs in, and the CSRF token its forms carry.
struct Session {
  Principal principal;     // role Write, token_name "web session"
  std::string csrf;        // 64 hex
  int64_t expires_at = 0;  // unix seconds
};

// A session just created: `cookie` is shown to the browser once and never stored.
struct NewSession {
  std::string cookie;  // 64 alphanumerics
  Session session;
};

// Thread-safe; calls block on the database (and argon2 for Login).
class SessionService {
 public:
  SessionService(db::UserStore& users, AccountService& accounts, SessionOptions options = {});

  // Checks the password and opens a session. Errors: Unauthorized "Invalid username or
  // password" (also for unknown users), BadRequest for empty fields, Internal.
  Result<NewSession> Login(std::string_view user, std::string_view password);
  // The session a cookie names; nullopt when it is unknown or expired (an expired row is
  // deleted). Errors: Internal.
  Result<std::optional<Session>> Find(std::string_view cookie);
  // Ends the session (idempotent). Errors: Internal.
  Result<void> Logout(std::string_view cookie);
  // Deletes expired sessions; returns how many. Login runs it at most once an hour, so
  // sessions that are never presented again do not pile up. Errors: Internal.
  Result<int64_t> Sweep();

 private:
  int64_t Now() const;

  db::UserStore& users_;
  AccountService& accounts_;
  SessionOptions options_;
  std::atomic<int64_t> last_sweep_{0};  // unix seconds
};

}  // namespace hangar::services

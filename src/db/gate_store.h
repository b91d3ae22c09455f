#pragma once
// GateStore: the access requests of gated repos (issue 19 §1, docs/gating.md): one per
// (repo, user), pending, accepted or rejected, with the gate form's fields. Whether a repo
// is gated is its RepoRecord::gated. Interface only; SqlGateStore (db/sql/, on SQLite or
// PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::db {

enum class AccessStatus { Pending, Accepted, Rejected };

// "pending" / "accepted" / "rejected".
std::string_view AccessStatusName(AccessStatus s);
// The inverse of AccessStatusName; none for anything else.
std::optional<AccessStatus> ParseAccessStatus(std::string_view s);

struct AccessRequestRecord {
  int64_t repo_id = 0;
  int64_t user_id = 0;
  AccessStatus status = AccessStatus::Pending;
  std::string fields;      // the gate form's fields, a JSON object ("" = none)
  std::string reason;      // a rejection's reason, "" otherwise
  bool granted = false;    // accepted by the repo's admins without a request of the user's
  int64_t created_at = 0;  // unix seconds: the request (or grant)
  int64_t updated_at = 0;  // unix seconds: its last status change
  // Joined from users, for listings.
  std::string user_name, user_fullname, user_email;
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class GateStore {
 public:
  virtual ~GateStore() = default;

  // The user's request on the repo, if any.
  virtual Result<std::optional<AccessRequestRecord>> Get(int64_t repo_id, int64_t user_id) = 0;
  // Inserts `r` unless the user has a request on the repo already; returns the stored one
  // (the new or the existing) and whether it is new. created_at/updated_at = now when 0.
  // Errors: NotFound (the repo or the user is gone).
  virtual Result<std::pair<AccessRequestRecord, bool>> Insert(const AccessRequestRecord& r) = 0;
  // Sets the status (and reason, "" unless rejected) of an existing request; updated_at =
  // `now`. Errors: NotFound (no request).
  virtual Result<void> SetStatus(int64_t repo_id, int64_t user_id, AccessStatus status,
                                 std::string_view reason, int64_t now) = 0;
  // Accepts the user on the repo whether or not they asked (granted = true when they had
  // not). Errors: NotFound (the repo or the user is gone).
  virtual Result<void> Grant(int64_t repo_id, int64_t user_id, int64_t now) = 0;
  // The repo's requests with `status`, oldest first, after `after_user` (0: from the
  // start; pages go by (created_at, user_id)), at most `limit`, with the users' names.
  virtual Result<std::vector<AccessRequestRecord>> List(int64_t repo_id, AccessStatus status,
                                                        int64_t after_created_at,
                                                        int64_t after_user, int limit) = 0;
};

}  // namespace hangar::db

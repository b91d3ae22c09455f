#pragma once
// GateService: the access requests of gated repos (issue 19 §1, docs/gating.md) — a user
// asks for access (the public hub's `ask-access`), an "auto" gate accepts at once and a
// "manual" one waits for the repo's writers, who list, accept, reject (with a reason),
// send back to pending, or grant access to a user who never asked (huggingface_hub's
// `*_access_request` and `grant_access`). Who passes a gate is RepoService::CheckGate's
// rule; this service changes what it reads.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/gate_store.h"
#include "db/user_store.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// A page of a repo's requests with one status, oldest first.
struct AccessRequestPage {
  std::vector<db::AccessRequestRecord> items;
  std::string next_cursor;  // "" on the last page
};

// The gate form's fields a user sent: name → value, in order.
using GateFields = std::vector<std::pair<std::string, std::string>>;

// Thread-safe; one per process. Calls block (database).
class GateService {
 public:
  GateService(RepoService& repos, db::GateStore& gates, db::UserStore& users);

  // `who` asks for access to `id` with the gate form's `fields` (at most 20, names up to
  // 100 bytes, values up to 2,000; kept as a JSON object). "auto" accepts at once, "manual"
  // leaves it pending; asking again changes nothing (a rejected request stays rejected).
  // Returns the request as stored. Errors: Unauthorized (anonymous), Forbidden (a deploy
  // key or a credential bound to one repo), those of RepoService::OpenMetadata, BadRequest
  // (not gated; `who` passes its gate as a member of its namespace; fields over the
  // limits).
  Result<db::AccessRequestRecord> Ask(const Principal& who, const RepoId& id,
                                      const GateFields& fields);
  // `who`'s own request on `repo` (the repo page's gate box), if any. Errors: the store's.
  Result<std::optional<db::AccessRequestRecord>> RequestOf(const Principal& who,
                                                           const db::RepoRecord& repo);
  // The requests of `id` with `status`, `limit` (1..1000) per page after `cursor` ("" =
  // the first page). Errors: as RepoService::Open with Write (a read token or role:
  // Forbidden); BadRequest (not gated, a foreign cursor).
  Result<AccessRequestPage> List(const Principal& who, const RepoId& id, db::AccessStatus status,
                                 const std::string& cursor, int limit);
  // Moves `user`'s request to `status`; `reason` (up to 2,000 bytes) only with Rejected.
  // Errors: as List; NotFound (no such user, no request of theirs, or it has that status
  // already: "… is already in the … list"); BadRequest (a reason with another status).
  Result<void> Handle(const Principal& who, const RepoId& id, const std::string& user,
                      db::AccessStatus status, const std::string& reason);
  // Accepts `user` whether or not they asked. Errors: as List; NotFound (no such user);
  // BadRequest (they have access already: accepted, or a member of its namespace).
  Result<void> Grant(const Principal& who, const RepoId& id, const std::string& user);

 private:
  // Opens `id` for its writers and checks it is gated. Errors: as List.
  Result<RepoHandle> OpenGated(const Principal& who, const RepoId& id);

  RepoService& repos_;
  db::GateStore& gates_;
  db::UserStore& users_;
};

}  // namespace hangar::services

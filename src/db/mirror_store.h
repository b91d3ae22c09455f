#pragma once
// MirrorStore: repos kept in step with a repository elsewhere (issue 18 §4). A pull mirror
// fetches every ref (and LFS object) of its upstream on a schedule and on demand; a push
// mirror pushes its repo to a remote after each push. Interface only; SqlMirrorStore
// (db/sql/, on SQLite or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::db {

enum class MirrorDirection { Pull, Push };

// "pull" / "push".
std::string_view MirrorDirectionName(MirrorDirection d);

struct MirrorRecord {
  int64_t id = 0;
  int64_t repo_id = 0;  // RepoRecord::id; a repo has at most one pull mirror
  MirrorDirection direction = MirrorDirection::Pull;
  std::string url;                      // the upstream (pull) or remote (push), without credentials
  std::string credential;               // sent as "Authorization: Bearer …"; never shown back
  int64_t interval_s = 0;               // pull: seconds between scheduled syncs; push: unused
  int64_t created_at = 0;               // unix seconds
  std::optional<int64_t> last_sync_at;  // the last attempt's end, unix seconds
  std::optional<int64_t> last_success_at;  // the last successful sync's end
  std::string last_error;                  // the last attempt's error, "" after a success
  int failures = 0;                        // attempts failed in a row
  int64_t next_sync_at = 0;                // pull: when the schedule syncs it next
  // pull: a pull-through cache's repo (issue 18 §5): LFS objects are linked at a sync and
  // fetched when first read; the schedule leaves it alone (DuePulls skips it).
  bool lazy_lfs = false;
  // pull, lazy_lfs: a private or gated upstream repo brought with a user's upstream token
  // (UpstreamTokenRecord); every reader needs the upstream's own verdict, and `credential`
  // is the token of a user the upstream let read it ("" once that token is gone).
  bool restricted = false;
};

// A user's own token for one upstream hub of the pull-through cache (docs/upstream.md).
struct UpstreamTokenRecord {
  int64_t user_id = 0;
  std::string upstream;       // the upstream's base URL, as configured ([upstream] url)
  std::string token;          // sent to it as "Authorization: Bearer …"; never shown back
  std::string upstream_user;  // who the upstream said the token is (its whoami), for display
  int64_t created_at = 0;     // unix seconds
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class MirrorStore {
 public:
  virtual ~MirrorStore() = default;

  // Inserts `m` (id assigned) and returns it. Errors: Conflict "repo already has a pull
  // mirror"; NotFound (the repo is gone).
  virtual Result<MirrorRecord> Add(const MirrorRecord& m) = 0;
  // Errors: NotFound.
  virtual Result<MirrorRecord> Get(int64_t id) = 0;
  // The repo's mirrors, pull first, then oldest first.
  virtual Result<std::vector<MirrorRecord>> ForRepo(int64_t repo_id) = 0;
  // Pull mirrors (not lazy_lfs ones) whose next_sync_at <= now, soonest first, at most
  // `limit`.
  virtual Result<std::vector<MirrorRecord>> DuePulls(int64_t now, int limit) = 0;
  // Records an attempt's end: last_sync_at = now; on success (error "") last_success_at =
  // now, failures = 0; else failures + 1. next_sync_at as given. Errors: NotFound.
  virtual Result<void> RecordSync(int64_t id, int64_t now, std::string_view error,
                                  int64_t next_sync_at) = 0;
  // Errors: NotFound.
  virtual Result<void> Delete(int64_t id) = 0;
  // Sets mirror `id`'s credential. Errors: NotFound.
  virtual Result<void> SetCredential(int64_t id, std::string_view credential) = 0;

  // Sets the user's token for `t.upstream` (created_at = now when 0), replacing one set
  // before; restricted mirrors that fetched with the replaced token fetch with the new one.
  virtual Result<void> PutUpstreamToken(const UpstreamTokenRecord& t) = 0;
  // The user's token for `upstream`, if set.
  virtual Result<std::optional<UpstreamTokenRecord>> GetUpstreamToken(
      int64_t user_id, std::string_view upstream) = 0;
  // The user's tokens, by upstream.
  virtual Result<std::vector<UpstreamTokenRecord>> ListUpstreamTokens(int64_t user_id) = 0;
  // Removes the user's token for `upstream`; restricted mirrors that fetched with it are
  // left with none (a token taken back is not used again). Errors: NotFound.
  virtual Result<void> DeleteUpstreamToken(int64_t user_id, std::string_view upstream) = 0;
};

}  // namespace hangar::db

#pragma once
// SshKeyStore: SSH public keys (issue 18 §1) — a user's keys and repos' deploy keys, in one
// table so that one key is never both. Interface only; SqlSshKeyStore (db/sql/, on SQLite
// or PostgreSQL) implements it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// One stored key. Exactly one of user_id and repo_id is non-zero.
struct SshKeyRecord {
  int64_t id = 0;
  int64_t user_id = 0;      // a user's key: the user
  int64_t repo_id = 0;      // a deploy key: RepoRecord::id of its repo
  bool read_write = false;  // deploy keys: may push; user keys: always false (unused)
  std::string title;
  std::string key_type;                 // "ssh-ed25519", …
  std::string blob_base64;              // the key blob, canonical base64
  std::string fingerprint;              // "SHA256:…" (unique)
  int64_t created_at = 0;               // unix seconds
  std::optional<int64_t> last_used_at;  // unix seconds
};

class SshKeyStore {
 public:
  virtual ~SshKeyStore() = default;

  // Inserts `key` (id and created_at are assigned) and returns it as stored.
  // Errors: Conflict "key is already in use" when the fingerprint exists; NotFound when
  // the user or repo is gone.
  virtual Result<SshKeyRecord> Add(const SshKeyRecord& key) = 0;
  // Errors: NotFound.
  virtual Result<SshKeyRecord> Get(int64_t id) = 0;
  // The key with this type and blob. Errors: NotFound.
  virtual Result<SshKeyRecord> FindByBlob(std::string_view key_type,
                                          std::string_view blob_base64) = 0;
  // Oldest first.
  virtual Result<std::vector<SshKeyRecord>> ListForUser(int64_t user_id) = 0;
  virtual Result<std::vector<SshKeyRecord>> ListForRepo(int64_t repo_id) = 0;
  // Errors: NotFound.
  virtual Result<void> Delete(int64_t id) = 0;
  // Sets last_used_at. Errors: NotFound.
  virtual Result<void> Touch(int64_t id, int64_t now) = 0;
};

}  // namespace hangar::db

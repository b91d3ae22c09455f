#pragma once
// SshKeyService: the SSH public keys that sign git in over SSH (issue 18 §1) — users' own
// keys, and deploy keys that each open one repo, read-only or read-write. sshd asks for a
// key through `hangar keys` (AuthorizedKeysCommand) and `hangar serv` turns the key id its
// forced command carries into a Principal, at the moment of each connection, so a deleted
// key is refused at once (git-lfs.md, docs/ssh.md).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "db/ssh_key_store.h"
#include "db/user_store.h"
#include "services/git/ssh_public_key.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// Titles: at most kMaxTitleChars characters of UTF-8 text without control characters.
// Thread-safe; one per process. Calls block on the database.
class SshKeyService {
 public:
  static constexpr size_t kMaxTitleChars = 100;

  // `now_unix` is the clock of created_at and last_used_at (unix seconds; default NowUnix).
  SshKeyService(db::SshKeyStore& keys, db::UserStore& users, RepoService& repos,
                std::function<int64_t()> now_unix = {});

  // Adds a key to `who`'s account from an authorized_keys-style line ("ssh-ed25519 AAAA…
  // comment"; ParseSshPublicKey). `title` "" takes the line's comment (made printable and
  // cut to kMaxTitleChars), else the type.
  // Errors: Unauthorized (anonymous), Forbidden (read-only token, or a deploy-key or
  // repo-scoped principal), BadRequest (the key: see ParseSshPublicKey; a title over 100
  // characters or with control characters), Conflict "key is already in use" (the same key
  // on any account or as a deploy key).
  Result<db::SshKeyRecord> AddUserKey(const Principal& who, std::string_view public_key,
                                      std::string_view title);
  // `who`'s own keys, oldest first. Errors: Unauthorized, Forbidden (a deploy-key or
  // repo-scoped principal: it has no account to list).
  Result<std::vector<db::SshKeyRecord>> ListUserKeys(const Principal& who);
  // Deletes one of `who`'s keys. Errors: Unauthorized, Forbidden (read-only token, or a
  // deploy-key or repo-scoped principal), NotFound (no such key of theirs).
  Result<void> DeleteUserKey(const Principal& who, int64_t key_id);

  // A deploy key on `repo`, which `who` administers (RepoService::Open with Admin).
  // Errors: as Open, Forbidden (a deploy-key or repo-scoped principal), BadRequest,
  // Conflict as AddUserKey.
  Result<db::SshKeyRecord> AddDeployKey(const Principal& who, const RepoId& repo,
                                        std::string_view public_key, std::string_view title,
                                        bool read_write);
  // The repo's deploy keys, oldest first. Errors: as Open with Admin, Forbidden as
  // AddDeployKey.
  Result<std::vector<db::SshKeyRecord>> ListDeployKeys(const Principal& who, const RepoId& repo);
  // Errors: as Open with Admin, Forbidden as AddDeployKey, NotFound (no such deploy key on
  // this repo).
  Result<void> DeleteDeployKey(const Principal& who, const RepoId& repo, int64_t key_id);

  // The stored key whose type and base64 blob are exactly these (sshd's %t and %k), for
  // AuthorizedKeysCommand. Errors: NotFound.
  Result<db::SshKeyRecord> Find(std::string_view type, std::string_view base64_blob);

  // Who key `key_id` signs in as now, for `hangar serv`:
  //  * a user's key: that user (role Write, token_name "ssh key '<title>'"), or
  //  * a deploy key: deploy_key_id and repo_scope set, user_id 0, role Write only for a
  //    read-write key, name "deploy-key-<id>", token_name "deploy key '<title>'".
  // Records the key's last use (at most once a minute). Errors: Unauthorized "SSH key is
  // no longer valid" (deleted key, or deleted user or repo).
  Result<Principal> PrincipalFor(int64_t key_id);

 private:
  // Refuses principals that may not manage keys at all. Errors: Unauthorized, Forbidden.
  static Result<void> CheckManager(const Principal& who);
  // The parsed key and its record's common fields, owned by nobody yet.
  Result<db::SshKeyRecord> MakeRecord(std::string_view public_key, std::string_view title);
  int64_t Now() const;

  db::SshKeyStore& keys_;
  db::UserStore& users_;
  RepoService& repos_;
  std::function<int64_t()> now_unix_;
};

}  // namespace hangar::services

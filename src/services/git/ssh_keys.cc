#include "services/git/ssh_keys.h"

#include <algorithm>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {
namespace {

// A key's last use is written at most this often (seconds): a busy CI key signs in many
// times a minute, and each write would take SQLite's write lock.
constexpr int64_t kTouchInterval = 60;

// UTF-8 characters in `s` (bytes that do not continue a sequence).
size_t CharCount(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// A title from a key line's comment: valid UTF-8, control characters as spaces, at most
// SshKeyService::kMaxTitleChars characters.
std::string TitleFromComment(std::string_view comment) {
  std::string text = ValidUtf8(comment);
  for (char& c : text) {
    if (IsControl(static_cast<unsigned char>(c))) c = ' ';
  }
  size_t chars = 0, end = 0;
  for (; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 &&
        ++chars > SshKeyService::kMaxTitleChars) {
      break;
    }
  }
  text.resize(end);
  return std::string(TrimBlanks(text));
}

Error KeyGone() { return MakeError(ErrorCode::Unauthorized, "SSH key is no longer valid"); }

}  // namespace

SshKeyService::SshKeyService(db::SshKeyStore& keys, db::UserStore& users, RepoService& repos,
                             std::function<int64_t()> now_unix)
    : keys_(keys), users_(users), repos_(repos), now_unix_(std::move(now_unix)) {}

int64_t SshKeyService::Now() const { return now_unix_ ? now_unix_() : NowUnix(); }

Result<void> SshKeyService::CheckManager(const Principal& who) {
  if (who.anonymous) {
    return MakeError(ErrorCode::Unauthorized, "authentication required to manage SSH keys");
  }
  // A credential bound to one repo (a deploy key, an LFS credential issued over SSH) must
  // never mint further credentials.
  if (who.deploy_key_id != 0 || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden,
                     "a credential bound to one repo cannot manage SSH keys; sign in as a user");
  }
  return {};
}

Result<db::SshKeyRecord> SshKeyService::MakeRecord(std::string_view public_key,
                                                   std::string_view title) {
  HANGAR_ASSIGN_OR_RETURN(SshPublicKey key, ParseSshPublicKey(public_key));
  db::SshKeyRecord rec;
  if (!title.empty()) {
    title = TrimBlanks(title);
    if (!IsUtf8(title) || std::any_of(title.begin(), title.end(), [](char c) {
          return IsControl(static_cast<unsigned char>(c));
        })) {
      return MakeError(ErrorCode::BadRequest,
                       "a key's title must be text without control characters");
    }
    if (CharCount(title) > kMaxTitleChars) {
      return MakeError(ErrorCode::BadRequest, "a key's title may have at most 100 characters");
    }
    rec.title = std::string(title);
  }
  if (rec.title.empty()) rec.title = TitleFromComment(key.comment);
  if (rec.title.empty()) rec.title = key.type;
  rec.key_type = std::move(key.type);
  rec.blob_base64 = std::move(key.blob_base64);
  rec.fingerprint = std::move(key.fingerprint);
  rec.created_at = Now();
  return rec;
}

Result<db::SshKeyRecord> SshKeyService::AddUserKey(const Principal& who,
                                                   std::string_view public_key,
                                                   std::string_view title) {
  HANGAR_TRY(CheckManager(who));
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden, "token '" + who.token_name +
                                               "' is read-only; adding an SSH key needs a "
                                               "write token");
  }
  HANGAR_ASSIGN_OR_RETURN(db::SshKeyRecord rec, MakeRecord(public_key, title));
  rec.user_id = who.user_id;
  auto added = keys_.Add(rec);
  if (added) {
    Log("services")->info("user {} added SSH key #{} ({})", who.name, added->id, rec.fingerprint);
  }
  return added;
}

Result<std::vector<db::SshKeyRecord>> SshKeyService::ListUserKeys(const Principal& who) {
  HANGAR_TRY(CheckManager(who));
  return keys_.ListForUser(who.user_id);
}

Result<void> SshKeyService::DeleteUserKey(const Principal& who, int64_t key_id) {
  HANGAR_TRY(CheckManager(who));
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden, "token '" + who.token_name +
                                               "' is read-only; deleting an SSH key needs a "
                                               "write token");
  }
  const std::string not_found = "SSH key #" + std::to_string(key_id) + " not found";
  auto key = keys_.Get(key_id);
  // Another user's key, or a deploy key, is as absent as a missing one.
  if (!key) {
    if (key.error().code == ErrorCode::NotFound) return MakeError(ErrorCode::NotFound, not_found);
    return std::move(key).error();
  }
  if (key->user_id != who.user_id) return MakeError(ErrorCode::NotFound, not_found);
  HANGAR_TRY(keys_.Delete(key_id));
  Log("services")->info("user {} deleted SSH key #{}", who.name, key_id);
  return {};
}

Result<db::SshKeyRecord> SshKeyService::AddDeployKey(const Principal& who, const RepoId& repo,
                                                     std::string_view public_key,
                                                     std::string_view title, bool read_write) {
  HANGAR_TRY(CheckManager(who));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle handle, repos_.Open(who, repo, Access::Admin));
  HANGAR_ASSIGN_OR_RETURN(db::SshKeyRecord rec, MakeRecord(public_key, title));
  rec.repo_id = handle.record.id;
  rec.read_write = read_write;
  auto added = keys_.Add(rec);
  if (!added) {
    // Deleted since Open: the repo is what is missing, not a key.
    if (added.error().code == ErrorCode::NotFound) {
      return MakeError(ErrorCode::RepoNotFound, "Repository not found: " + repo.UrlPath());
    }
    return added;
  }
  Log("services")
      ->info("{} added {} deploy key #{} to {} ({})", who.name,
             read_write ? "read-write" : "read-only", added->id, repo.UrlPath(), rec.fingerprint);
  return added;
}

Result<std::vector<db::SshKeyRecord>> SshKeyService::ListDeployKeys(const Principal& who,
                                                                    const RepoId& repo) {
  HANGAR_TRY(CheckManager(who));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle handle, repos_.Open(who, repo, Access::Admin));
  return keys_.ListForRepo(handle.record.id);
}

Result<void> SshKeyService::DeleteDeployKey(const Principal& who, const RepoId& repo,
                                            int64_t key_id) {
  HANGAR_TRY(CheckManager(who));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle handle, repos_.Open(who, repo, Access::Admin));
  const std::string not_found =
      "deploy key #" + std::to_string(key_id) + " not found on " + repo.UrlPath();
  auto key = keys_.Get(key_id);
  if (!key) {
    if (key.error().code == ErrorCode::NotFound) return MakeError(ErrorCode::NotFound, not_found);
    return std::move(key).error();
  }
  if (key->repo_id != handle.record.id) return MakeError(ErrorCode::NotFound, not_found);
  HANGAR_TRY(keys_.Delete(key_id));
  Log("services")->info("{} deleted deploy key #{} of {}", who.name, key_id, repo.UrlPath());
  return {};
}

Result<db::SshKeyRecord> SshKeyService::Find(std::string_view type, std::string_view base64_blob) {
  return keys_.FindByBlob(type, base64_blob);
}

Result<Principal> SshKeyService::PrincipalFor(int64_t key_id) {
  auto key = keys_.Get(key_id);
  if (!key) {
    if (key.error().code == ErrorCode::NotFound) return KeyGone();
    return std::move(key).error();
  }
  Principal p;
  if (key->user_id != 0) {
    auto user = users_.FindUserById(key->user_id);
    if (!user) {
      if (user.error().code == ErrorCode::NotFound) return KeyGone();
      return std::move(user).error();
    }
    p = Principal::User(user->id, user->name, user->is_admin, TokenRole::Write,
                        "ssh key '" + key->title + "'");
  } else {
    // The row goes with its repo (ON DELETE CASCADE), but a connection may race the
    // delete: ask again now.
    auto repo = repos_.FindById(key->repo_id);
    if (!repo) {
      if (repo.error().code == ErrorCode::RepoNotFound) return KeyGone();
      return std::move(repo).error();
    }
    p.anonymous = false;
    p.name = "deploy-key-" + std::to_string(key->id);
    p.deploy_key_id = key->id;
    p.repo_scope = repo->id;
    p.role = key->read_write ? TokenRole::Write : TokenRole::Read;
    p.token_name = "deploy key '" + key->title + "'";
  }
  p.ssh_key_id = key->id;
  const int64_t now = Now();
  if (!key->last_used_at || now - *key->last_used_at >= kTouchInterval) {
    // Best effort: a sign-in never fails for the bookkeeping of it.
    if (auto touched = keys_.Touch(key->id, now); !touched) {
      Log("services")
          ->warn("SSH key #{}: recording its use failed: {}", key->id, touched.error().message);
    }
  }
  return p;
}

}  // namespace hangar::services

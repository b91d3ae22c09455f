#pragma once
// Principal: who is making a request, as established by services::Authenticator from a
// token or by services::SessionService from a browser session.

#include <cstdint>
#include <string>

namespace hangar {

enum class TokenRole { Read, Write };

// What a principal may do in a namespace, and so in its repos (services::AccessPolicy
// decides it; routes declare the level they need, http/router.h).
enum class Access { None, Read, Write, Admin };

struct Principal {
  bool anonymous = true;
  int64_t user_id = 0;
  std::string name;                  // user name
  bool is_admin = false;             // site administrator
  TokenRole role = TokenRole::Read;  // role of the token used
  int64_t token_id = 0;
  std::string token_name;        // display name of the token
  int64_t token_created_at = 0;  // unix seconds
  // Signed in by a browser session cookie (services::SessionService), not a token.
  bool session = false;
  // A credential bound to one repo (issue 18): a deploy key over SSH, or the LFS
  // credential `git-lfs-authenticate` issued over SSH. RepoService::Open refuses every
  // other repo, and the router admits such a principal only on git and LFS routes.
  int64_t repo_scope = 0;  // db::RepoRecord::id; 0: not bound
  // Signed in with a deploy key (db::SshKeyRecord::id): user_id is 0; Read on repo_scope,
  // or Write when role is Write (a read-write key).
  int64_t deploy_key_id = 0;
  // Signed in over SSH with this key (a user's or a deploy key; db::SshKeyRecord::id), or
  // by a credential obtained with it; 0 otherwise.
  int64_t ssh_key_id = 0;

  bool CanWrite() const { return !anonymous && role == TokenRole::Write; }
  static Principal Anonymous() { return Principal{}; }
  // User `user_id` (`name`, a site admin or not) signed in with a credential of `role`
  // whose display name is `via` (a token's name, "web session", …). The one way every
  // credential turns into a user's principal.
  static Principal User(int64_t user_id, std::string name, bool is_admin, TokenRole role,
                        std::string via) {
    Principal p;
    p.anonymous = false;
    p.user_id = user_id;
    p.name = std::move(name);
    p.is_admin = is_admin;
    p.role = role;
    p.token_name = std::move(via);
    return p;
  }
  // The server's operator at its command line (`hangar import`, `hangar maintain`): a site
  // admin acting for no user.
  static Principal Operator() {
    Principal p = User(0, "hangar-cli", true, TokenRole::Write, "");
    return p;
  }
  // The hub itself, acting for no user (the gateway's runtimes and health checks read
  // every route and repo): a site admin named "hangar".
  static Principal Hub() {
    Principal p;
    p.anonymous = false;
    p.is_admin = true;
    p.name = "hangar";
    return p;
  }
};

}  // namespace hangar

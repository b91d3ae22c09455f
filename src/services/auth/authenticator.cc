#include "services/auth/authenticator.h"

#include <algorithm>

#include "core/base64.h"
#include "core/log.h"
#include "core/sha256.h"
#include "core/util.h"
#include "services/auth/repo_credential.h"

namespace hangar::services {
namespace {

// The change feed's topic of revoked tokens (keys: their SHA-256 hex).
constexpr std::string_view kTokenTopic = "token";

constexpr size_t kMaxTokenLength = 512;

Error Unauthorized() {
  return MakeError(ErrorCode::Unauthorized, std::string(kInvalidCredentials));
}

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// The token text carried by an Authorization header value, or nullopt when malformed.
std::optional<std::string> TokenFromHeader(std::string_view header) {
  size_t sp = header.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  std::string_view scheme = header.substr(0, sp);
  std::string_view rest = TrimBlanks(header.substr(sp + 1));
  if (IEquals(scheme, "Bearer")) return std::string(rest);
  if (!IEquals(scheme, "Basic")) return std::nullopt;
  auto decoded = Base64Decode(rest);
  if (!decoded) return std::nullopt;
  size_t colon = decoded->find(':');  // any user name; the token is the password
  if (colon == std::string::npos) return std::nullopt;
  return decoded->substr(colon + 1);
}

}  // namespace

Authenticator::Authenticator(db::UserStore& users, AuthenticatorOptions options)
    : users_(users),
      options_(std::move(options)),
      tokens_(options_.token_cache_capacity, options_.token_cache_ttl_ms) {
  if (!options_.now_millis) options_.now_millis = NowUnixMillis;
  if (options_.changes) {
    revocations_ = db::EvictOnChange(*options_.changes, std::string(kTokenTopic), tokens_);
  }
}

Result<Principal> Authenticator::Authenticate(std::string_view header) {
  header = TrimBlanks(header);
  if (header.empty()) return Principal::Anonymous();
  auto token = TokenFromHeader(header);
  if (!token || token->empty() || token->size() > kMaxTokenLength) return Unauthorized();
  const int64_t now_ms = options_.now_millis();
  const int64_t now_s = now_ms / 1000;
  if (token->starts_with(kRepoCredentialPrefix)) return FromRepoCredential(*token, now_s);
  const std::string key = Sha256::Of(*token).Hex();

  Principal principal;
  bool expired = false;
  bool touch = false;
  bool hit = tokens_.Visit(key, now_ms, [&](CachedToken& e) {
    if (e.expires_at && *e.expires_at <= now_s) {
      expired = true;
      return;
    }
    principal = e.principal;
    if (now_s - e.last_touch >= options_.touch_interval_seconds) {
      e.last_touch = now_s;
      touch = true;
    }
  });
  if (expired) {
    tokens_.Erase(key);
    return Unauthorized();
  }
  if (!hit) {
    auto rec = users_.FindTokenByHash(key);
    if (!rec) {
      if (rec.error().code == ErrorCode::NotFound) return Unauthorized();
      return std::move(rec).error();
    }
    if (rec->revoked || (rec->expires_at && *rec->expires_at <= now_s)) return Unauthorized();
    auto user = users_.FindUserById(rec->user_id);
    if (!user) {
      if (user.error().code == ErrorCode::NotFound) return Unauthorized();
      return std::move(user).error();
    }
    principal = Principal::User(user->id, user->name, user->is_admin, rec->role, rec->name);
    principal.token_id = rec->id;
    principal.token_created_at = rec->created_at;
    CachedToken entry{principal, rec->expires_at, rec->last_used_at.value_or(0)};
    if (now_s - entry.last_touch >= options_.touch_interval_seconds) {
      entry.last_touch = now_s;
      touch = true;
    }
    tokens_.Put(key, std::move(entry), now_ms);
  }
  if (touch) {
    // Bookkeeping only: a failure must not fail the request.
    if (auto r = users_.TouchToken(principal.token_id, now_s); !r)
      Log("auth")->warn("recording token use failed: {}", r.error().message);
  }
  return principal;
}

Result<Principal> Authenticator::FromRepoCredential(std::string_view credential, int64_t now_s) {
  auto claims = VerifyRepoCredential(options_.credential_key, credential, now_s);
  if (!claims) return Unauthorized();
  if (options_.ssh_keys && claims->key_id != 0) {
    auto key = options_.ssh_keys->Get(claims->key_id);
    if (!key) {
      if (key.error().code == ErrorCode::NotFound) return Unauthorized();
      return std::move(key).error();
    }
    bool same = claims->deploy_key_id != 0 ? key->repo_id == claims->repo_id
                                           : key->user_id == claims->user_id;
    if (!same) return Unauthorized();
  }
  Principal p;
  p.anonymous = false;
  p.repo_scope = claims->repo_id;
  p.role = claims->write ? TokenRole::Write : TokenRole::Read;
  p.token_name = "SSH credential";
  p.ssh_key_id = claims->key_id;
  if (claims->deploy_key_id != 0) {
    p.deploy_key_id = claims->deploy_key_id;
    p.name = "deploy-key-" + std::to_string(claims->deploy_key_id);
    return p;
  }
  auto user = users_.FindUserById(claims->user_id);
  if (!user) {
    if (user.error().code == ErrorCode::NotFound) return Unauthorized();
    return std::move(user).error();
  }
  Principal u = Principal::User(user->id, user->name, user->is_admin, p.role, p.token_name);
  u.repo_scope = p.repo_scope;
  u.ssh_key_id = p.ssh_key_id;
  return u;
}

Result<NewToken> Authenticator::CreateToken(std::string_view user, std::string_view token_name,
                                            TokenRole role, std::optional<int64_t> expires_at) {
  if (token_name.empty() || token_name.size() > 100)
    return MakeError(ErrorCode::BadRequest, "a token name must be 1 to 100 characters long");
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(user));
  NewToken out;
  out.token = "hf_" + RandomAlnum(34);
  db::TokenRecord rec;
  rec.user_id = u.id;
  rec.name = std::string(token_name);
  rec.role = role;
  rec.sha256_hex = Sha256::Of(out.token).Hex();
  rec.created_at = options_.now_millis() / 1000;
  rec.expires_at = expires_at;
  HANGAR_ASSIGN_OR_RETURN(auto stored, users_.CreateToken(rec));
  out.record = std::move(stored);
  return out;
}

Result<std::vector<db::TokenRecord>> Authenticator::ListTokens(std::string_view user) {
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(user));
  return users_.ListTokens(u.id);
}

Result<void> Authenticator::RevokeToken(std::string_view user, int64_t token_id) {
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(user));
  HANGAR_ASSIGN_OR_RETURN(auto rec, users_.RevokeToken(u.id, token_id));
  tokens_.Erase(rec.sha256_hex);
  if (options_.changes) options_.changes->Publish(kTokenTopic, rec.sha256_hex);
  return {};
}

Result<WhoAmIInfo> Authenticator::WhoAmI(const Principal& who) {
  if (who.anonymous) return Unauthorized();
  auto u = users_.FindUserById(who.user_id);
  if (!u) {
    if (u.error().code == ErrorCode::NotFound) return Unauthorized();
    return std::move(u).error();
  }
  HANGAR_ASSIGN_OR_RETURN(auto orgs, users_.ListOrgsOfUser(u->id));
  WhoAmIInfo info;
  info.user_id = u->id;
  info.name = u->name;
  info.fullname = u->fullname;
  info.email = u->email;
  info.is_admin = u->is_admin;
  info.created_at = u->created_at;
  info.orgs = std::move(orgs);
  info.token_display_name = who.token_name;
  info.token_role = who.role;
  info.token_created_at = who.token_created_at;
  return info;
}

}  // namespace hangar::services

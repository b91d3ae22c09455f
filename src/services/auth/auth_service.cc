#include "services/auth/auth_service.h"

#include <argon2.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/base64.h"
#include "core/log.h"
#include "core/repo_id.h"
#include "core/sha256.h"
#include "core/ttl_cache.h"
#include "core/util.h"

namespace hangar::services {
namespace {

// The site's own top-level paths: a user or org of that name would be shadowed by a page
// (/models, /settings, ...) or shadow one (docs/web.md).
constexpr std::string_view kReservedNames[] = {
    "api", "datasets",      "healthz", "import",   "login",  "logout", "models",
    "new", "organizations", "readyz",  "settings", "spaces", "static", "v2"};

// A valid repo name part that is none of kReservedNames (in any case). Errors: BadRequest.
Result<void> ValidateNamespaceName(std::string_view name, std::string_view what) {
  HANGAR_TRY(ValidateRepoNamePart(name, what));
  for (std::string_view r : kReservedNames) {
    if (name.size() == r.size() &&
        std::equal(name.begin(), name.end(), r.begin(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
      return MakeError(ErrorCode::BadRequest,
                       "'" + std::string(name) + "' is reserved for the site's own pages");
  }
  return {};
}

constexpr size_t kMaxTokenLength = 512;
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;
constexpr std::string_view kBadPassword = "Invalid username or password";

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

Result<void> ValidatePassword(std::string_view password) {
  if (password.size() < 8 || password.size() > 1024)
    return MakeError(ErrorCode::BadRequest, "a password must be 8 to 1024 bytes long");
  return {};
}

struct CachedToken {
  Principal principal;
  std::optional<int64_t> expires_at;  // token expiry, unix seconds
  int64_t last_touch = 0;             // unix seconds of the last last_used_at write
};

}  // namespace

struct AuthService::Caches {
  TtlCache<CachedToken> tokens;  // keyed by token SHA-256 hex
};

AuthService::AuthService(db::UserStore& users, AccessPolicy& access, AuthOptions options)
    : users_(users),
      access_(access),
      options_(std::move(options)),
      caches_(new Caches{
          TtlCache<CachedToken>(options_.token_cache_capacity, options_.token_cache_ttl_ms)}),
      hash_slots_(std::clamp(options_.password_hash_concurrency, 1, 1024)) {}

AuthService::~AuthService() = default;

int64_t AuthService::NowMillis() const {
  return options_.now_millis ? options_.now_millis() : NowUnixMillis();
}

Result<Principal> AuthService::Authenticate(std::string_view header) {
  header = TrimBlanks(header);
  if (header.empty()) return Principal::Anonymous();
  auto token = TokenFromHeader(header);
  if (!token || token->empty() || token->size() > kMaxTokenLength) return Unauthorized();
  const std::string key = Sha256::Of(*token).Hex();
  const int64_t now_ms = NowMillis();
  const int64_t now_s = now_ms / 1000;

  Principal principal;
  bool expired = false;
  bool touch = false;
  bool hit = caches_->tokens.Visit(key, now_ms, [&](CachedToken& e) {
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
    caches_->tokens.Erase(key);
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
    principal.anonymous = false;
    principal.user_id = user->id;
    principal.name = user->name;
    principal.is_admin = user->is_admin;
    principal.role = rec->role;
    principal.token_id = rec->id;
    principal.token_name = rec->name;
    principal.token_created_at = rec->created_at;
    CachedToken entry{principal, rec->expires_at, rec->last_used_at.value_or(0)};
    if (now_s - entry.last_touch >= options_.touch_interval_seconds) {
      entry.last_touch = now_s;
      touch = true;
    }
    caches_->tokens.Put(key, std::move(entry), now_ms);
  }
  if (touch) {
    // Bookkeeping only: a failure must not fail the request.
    if (auto r = users_.TouchToken(principal.token_id, now_s); !r)
      Log("auth")->warn("recording token use failed: {}", r.error().message);
  }
  return principal;
}

// ---- passwords ----

Result<std::string> AuthService::HashPassword(std::string_view password) {
  std::array<uint8_t, kSaltBytes> salt;
  if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1)
    return MakeError(ErrorCode::Internal, "no randomness for a password salt");
  const uint32_t t = options_.argon2_iterations, m = options_.argon2_memory_kib,
                 p = options_.argon2_parallelism;
  std::string encoded(argon2_encodedlen(t, m, p, kSaltBytes, kHashBytes, Argon2_id), '\0');
  hash_slots_.acquire();
  int in_flight = ++hashes_in_flight_;
  if (options_.on_password_hash) options_.on_password_hash(in_flight);
  int rc = argon2id_hash_encoded(t, m, p, password.data(), password.size(), salt.data(),
                                 salt.size(), kHashBytes, encoded.data(), encoded.size());
  --hashes_in_flight_;
  hash_slots_.release();
  if (rc != ARGON2_OK)
    return MakeError(ErrorCode::Internal, std::string("argon2: ") + argon2_error_message(rc));
  encoded.resize(encoded.find('\0'));  // the buffer size is an upper bound
  return encoded;
}

Result<bool> AuthService::VerifyPassword(const std::string& encoded, std::string_view password) {
  hash_slots_.acquire();
  int in_flight = ++hashes_in_flight_;
  if (options_.on_password_hash) options_.on_password_hash(in_flight);
  int rc = argon2id_verify(encoded.c_str(), password.data(), password.size());
  --hashes_in_flight_;
  hash_slots_.release();
  if (rc == ARGON2_OK) return true;
  if (rc == ARGON2_VERIFY_MISMATCH) return false;
  return MakeError(ErrorCode::Internal, std::string("argon2: ") + argon2_error_message(rc));
}

Result<db::UserRecord> AuthService::CreateUser(std::string_view name, std::string_view email,
                                               bool is_admin,
                                               std::optional<std::string_view> password,
                                               std::string_view fullname) {
  HANGAR_TRY(ValidateNamespaceName(name, "user name"));
  db::UserRecord rec;
  rec.name = std::string(name);
  rec.email = std::string(email);
  rec.fullname = std::string(fullname);
  rec.is_admin = is_admin;
  if (password) {
    HANGAR_TRY(ValidatePassword(*password));
    // Fail fast on a taken name before spending a hash on it.
    auto kind = users_.GetNamespaceKind(name);
    if (!kind) return std::move(kind).error();
    if (*kind != db::NamespaceKind::None)
      return MakeError(ErrorCode::Conflict, "the name '" + rec.name + "' is taken");
    auto hash = HashPassword(*password);
    if (!hash) return std::move(hash).error();
    rec.password_hash = std::move(*hash);
  }
  return users_.CreateUser(rec);
}

Result<void> AuthService::SetPassword(std::string_view user, std::string_view password) {
  HANGAR_TRY(ValidatePassword(password));
  auto u = users_.FindUserByName(user);
  if (!u) return std::move(u).error();
  auto hash = HashPassword(password);
  if (!hash) return std::move(hash).error();
  return users_.SetPasswordHash(u->id, *hash);
}

Result<db::UserRecord> AuthService::CheckPassword(std::string_view user,
                                                  std::string_view password) {
  Error bad = MakeError(ErrorCode::Unauthorized, std::string(kBadPassword));
  auto u = users_.FindUserByName(user);
  if (!u && u.error().code != ErrorCode::NotFound) return std::move(u).error();
  if (!u || !u->password_hash) {
    // Spend the same work as for a real user so timing does not reveal which names exist.
    std::call_once(dummy_once_, [&] {
      auto h = HashPassword("hangar-dummy-password");
      if (h) dummy_hash_ = std::move(*h);
    });
    if (!dummy_hash_.empty()) (void)VerifyPassword(dummy_hash_, password);
    return bad;
  }
  auto ok = VerifyPassword(*u->password_hash, password);
  if (!ok) return std::move(ok).error();
  if (!*ok) return bad;
  return std::move(*u);
}

// ---- tokens ----

Result<NewToken> AuthService::CreateToken(std::string_view user, std::string_view token_name,
                                          TokenRole role, std::optional<int64_t> expires_at) {
  if (token_name.empty() || token_name.size() > 100)
    return MakeError(ErrorCode::BadRequest, "a token name must be 1 to 100 characters long");
  auto u = users_.FindUserByName(user);
  if (!u) return std::move(u).error();
  NewToken out;
  out.token = "hf_" + RandomAlnum(34);
  db::TokenRecord rec;
  rec.user_id = u->id;
  rec.name = std::string(token_name);
  rec.role = role;
  rec.sha256_hex = Sha256::Of(out.token).Hex();
  rec.created_at = NowMillis() / 1000;
  rec.expires_at = expires_at;
  auto stored = users_.CreateToken(rec);
  if (!stored) return std::move(stored).error();
  out.record = std::move(*stored);
  return out;
}

Result<std::vector<db::TokenRecord>> AuthService::ListTokens(std::string_view user) {
  auto u = users_.FindUserByName(user);
  if (!u) return std::move(u).error();
  return users_.ListTokens(u->id);
}

Result<void> AuthService::RevokeToken(std::string_view user, int64_t token_id) {
  auto u = users_.FindUserByName(user);
  if (!u) return std::move(u).error();
  auto rec = users_.RevokeToken(u->id, token_id);
  if (!rec) return std::move(rec).error();
  caches_->tokens.Erase(rec->sha256_hex);
  return {};
}

// ---- orgs ----

Result<db::OrgRecord> AuthService::CreateOrg(std::string_view name, std::string_view owner,
                                             std::string_view fullname) {
  HANGAR_TRY(ValidateNamespaceName(name, "organization name"));
  auto u = users_.FindUserByName(owner);
  if (!u) return std::move(u).error();
  db::OrgRecord org;
  org.name = std::string(name);
  org.fullname = std::string(fullname);
  auto created = users_.CreateOrg(org, u->id);
  if (created) access_.ForgetMembership(u->id, name);
  return created;
}

Result<void> AuthService::AddMember(std::string_view org, std::string_view user, db::OrgRole role) {
  auto o = users_.FindOrgByName(org);
  if (!o) return std::move(o).error();
  auto u = users_.FindUserByName(user);
  if (!u) return std::move(u).error();
  if (role != db::OrgRole::Admin) {
    // An org keeps at least one admin: the last one cannot step down.
    HANGAR_ASSIGN_OR_RETURN(auto members, users_.ListMembers(o->id));
    size_t admins = 0;
    bool was_admin = false;
    for (const auto& m : members) {
      if (m.role != db::OrgRole::Admin) continue;
      ++admins;
      was_admin = was_admin || m.user_id == u->id;
    }
    if (was_admin && admins == 1)
      return MakeError(ErrorCode::Conflict, std::string(user) + " is the only admin of " +
                                                std::string(org) + ": add another admin first");
  }
  HANGAR_TRY(users_.AddMember(o->id, u->id, role));
  access_.ForgetMembership(u->id, org);
  return {};
}

Result<WhoAmIInfo> AuthService::WhoAmI(const Principal& who) {
  if (who.anonymous) return Unauthorized();
  auto u = users_.FindUserById(who.user_id);
  if (!u) {
    if (u.error().code == ErrorCode::NotFound) return Unauthorized();
    return std::move(u).error();
  }
  auto orgs = users_.ListOrgsOfUser(u->id);
  if (!orgs) return std::move(orgs).error();
  WhoAmIInfo info;
  info.user_id = u->id;
  info.name = u->name;
  info.fullname = u->fullname;
  info.email = u->email;
  info.is_admin = u->is_admin;
  info.created_at = u->created_at;
  info.orgs = std::move(*orgs);
  info.token_display_name = who.token_name;
  info.token_role = who.role;
  info.token_created_at = who.token_created_at;
  return info;
}

}  // namespace hangar::services

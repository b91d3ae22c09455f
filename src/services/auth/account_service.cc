#include "services/auth/account_service.h"

#include <argon2.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/repo_id.h"

namespace hangar::services {
namespace {

// The site's own top-level paths: a user or org of that name would be shadowed by a page
// (/models, /settings, ...) or shadow one (docs/web.md).
// The dataset viewer's API is at top-level paths too (api/viewer/viewer_routes.h), and so
// are the registry's /health and the gateway's /v1 (api/registry/registry_routes.h).
constexpr std::string_view kReservedNames[] = {"api",
                                               "collections",
                                               "croissant-crumbs",
                                               "datasets",
                                               "filter",
                                               "first-rows",
                                               "health",
                                               "healthz",
                                               "import",
                                               "info",
                                               "is-valid",
                                               "login",
                                               "logout",
                                               "models",
                                               "new",
                                               "organizations",
                                               "parquet",
                                               "readyz",
                                               "registry",
                                               "rows",
                                               "search",
                                               "settings",
                                               "size",
                                               "spaces",
                                               "splits",
                                               "static",
                                               "statistics",
                                               "v1",
                                               "v2"};

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

constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;
constexpr std::string_view kBadPassword = "Invalid username or password";

Result<void> ValidatePassword(std::string_view password) {
  if (password.size() < 8 || password.size() > 1024)
    return MakeError(ErrorCode::BadRequest, "a password must be 8 to 1024 bytes long");
  return {};
}

}  // namespace

AccountService::AccountService(db::UserStore& users, AccessPolicy& access, AccountOptions options)
    : users_(users),
      access_(access),
      options_(std::move(options)),
      hash_slots_(std::clamp(options_.password_hash_concurrency, 1, 1024)) {}

// ---- passwords ----

Result<std::string> AccountService::HashPassword(std::string_view password) {
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

Result<bool> AccountService::VerifyPassword(const std::string& encoded, std::string_view password) {
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

// ---- users ----

Result<db::UserRecord> AccountService::CreateUser(std::string_view name, std::string_view email,
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
    HANGAR_ASSIGN_OR_RETURN(auto kind, users_.GetNamespaceKind(name));
    if (kind != db::NamespaceKind::None)
      return MakeError(ErrorCode::Conflict, "the name '" + rec.name + "' is taken");
    HANGAR_ASSIGN_OR_RETURN(auto hash, HashPassword(*password));
    rec.password_hash = std::move(hash);
  }
  return users_.CreateUser(rec);
}

Result<void> AccountService::SetPassword(std::string_view user, std::string_view password) {
  HANGAR_TRY(ValidatePassword(password));
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(user));
  HANGAR_ASSIGN_OR_RETURN(auto hash, HashPassword(password));
  return users_.SetPasswordHash(u.id, hash);
}

Result<db::UserRecord> AccountService::CheckPassword(std::string_view user,
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
  HANGAR_ASSIGN_OR_RETURN(auto ok, VerifyPassword(*u->password_hash, password));
  if (!ok) return bad;
  return std::move(*u);
}

// ---- orgs and memberships ----

Result<db::OrgRecord> AccountService::CreateOrg(std::string_view name, std::string_view owner,
                                                std::string_view fullname) {
  HANGAR_TRY(ValidateNamespaceName(name, "organization name"));
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(owner));
  db::OrgRecord org;
  org.name = std::string(name);
  org.fullname = std::string(fullname);
  auto created = users_.CreateOrg(org, u.id);
  if (created) access_.ForgetMembership(u.id, name);
  return created;
}

Result<void> AccountService::AddMember(std::string_view org, std::string_view user,
                                       db::OrgRole role) {
  HANGAR_ASSIGN_OR_RETURN(auto o, users_.FindOrgByName(org));
  HANGAR_ASSIGN_OR_RETURN(auto u, users_.FindUserByName(user));
  if (role != db::OrgRole::Admin) {
    // An org keeps at least one admin: the last one cannot step down.
    HANGAR_ASSIGN_OR_RETURN(auto members, users_.ListMembers(o.id));
    size_t admins = 0;
    bool was_admin = false;
    for (const auto& m : members) {
      if (m.role != db::OrgRole::Admin) continue;
      ++admins;
      was_admin = was_admin || m.user_id == u.id;
    }
    if (was_admin && admins == 1)
      return MakeError(ErrorCode::Conflict, std::string(user) + " is the only admin of " +
                                                std::string(org) + ": add another admin first");
  }
  HANGAR_TRY(users_.AddMember(o.id, u.id, role));
  access_.ForgetMembership(u.id, org);
  return {};
}

// ---- reads for the web pages ----

Result<db::NamespaceKind> AccountService::NamespaceKind(std::string_view name) {
  return users_.GetNamespaceKind(name);
}

Result<db::UserRecord> AccountService::FindUser(std::string_view name) {
  return users_.FindUserByName(name);
}

Result<db::OrgRecord> AccountService::FindOrg(std::string_view name) {
  return users_.FindOrgByName(name);
}

Result<std::vector<db::OrgMembership>> AccountService::OrgsOfUser(int64_t user_id) {
  return users_.ListOrgsOfUser(user_id);
}

Result<std::vector<db::OrgMember>> AccountService::Members(int64_t org_id) {
  return users_.ListMembers(org_id);
}

}  // namespace hangar::services

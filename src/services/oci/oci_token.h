#pragma once
// Registry tokens: the short-lived, scoped Bearer tokens of the OCI token flow (oci.md §9.2).
// A client trades hub credentials (or none) at /v2/token for a token that names its user
// and the repositories and actions it may use; the registry then trusts the token alone.
// Tokens are signed with HMAC-SHA256 under the server secret and are only ever checked by
// this server, so their format is ours:
//
//   "hgroci1." base64url(JSON claims) "." base64url(HMAC-SHA256(key, context || prefix+claims))
//
// The prefix tells them apart from hub tokens ("hf_..."); no hub token contains a '.'.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "services/auth/access_policy.h"

namespace hangar::services {

// One resource scope: what a token request asks for, or one entry of a token's access
// list (oci.md §9.2). E.g. {"repository", "ns/img", {"pull", "push"}},
// {"registry", "catalog", {"*"}}.
struct OciResourceAccess {
  std::string type;                  // "repository", "registry", ...; class suffix dropped
  std::string name;                  // may contain ':' (host:port prefixes) and '/'
  std::vector<std::string> actions;  // "pull", "push", "delete", "*"; no duplicates

  friend bool operator==(const OciResourceAccess&, const OciResourceAccess&) = default;
};

// Parses one scope "type:name:action,action" (oci.md §9.2 grammar): the type ends at the
// first ':', the actions start after the last ':', so names may hold ':'. The type is
// [a-z0-9]+ with an optional, ignored "(class)" suffix; actions are [a-z]* or "*" (empty
// ones are dropped, duplicates merged). Errors: BadRequest naming the scope and what is
// wrong (fewer than two ':', bad type, empty name, bad action).
Result<OciResourceAccess> ParseOciScope(std::string_view scope);

// Parses the `scope` values of a token request: each value holds one or more scopes
// separated by spaces; the same resource asked for twice gets the union of its actions, in
// first-seen order. At most 64 resources. Errors: BadRequest as ParseOciScope, or too many.
Result<std::vector<OciResourceAccess>> ParseOciScopes(const std::vector<std::string>& values);

// "repository:ns/img:pull,push" — the inverse of ParseOciScope.
std::string FormatOciScope(const OciResourceAccess& access);

// Whether `access` lets its holder do `action` to the resource `type`/`name`: an entry
// with that exact type and name lists `action` or "*".
bool OciAccessCovers(const std::vector<OciResourceAccess>& access, std::string_view type,
                     std::string_view name, std::string_view action);

// Which of `requested` repository actions the caller gets, in request order: Read allows
// pull; Write and Admin allow pull, push and delete; "*" stands for all that are allowed.
// Anonymous callers and read-role tokens never get push or delete, whatever `allowed` says.
std::vector<std::string> GrantRepositoryActions(const std::vector<std::string>& requested,
                                                Access allowed, const Principal& who);

// The signed content of a registry token.
struct RegistryTokenClaims {
  // The subject: the hub user and the role of the hub token the registry token came from.
  bool anonymous = true;
  int64_t user_id = 0;
  std::string user;  // user name; "" when anonymous
  bool is_admin = false;
  TokenRole role = TokenRole::Read;
  std::vector<OciResourceAccess> access;  // what was granted; may be empty
  std::string audience;                   // the token service name (challenge `service`)
  int64_t issued_at = 0;                  // unix seconds
  int64_t expires_at = 0;                 // unix seconds; refused from this second on

  // The subject fields of `who` (the rest left as is).
  void SetSubject(const Principal& who);
  // The principal the registry acts as: user_id, name, is_admin and role from the claims
  // (anonymous when the token was issued without credentials).
  Principal ToPrincipal() const;

  friend bool operator==(const RegistryTokenClaims&, const RegistryTokenClaims&) = default;
};

// True when `token` has the registry token prefix (it may still be invalid).
bool IsRegistryToken(std::string_view token);

// Signs `claims` under `key` (the server secret, raw bytes). The result is made of
// [A-Za-z0-9._-] (RFC 6750 token68), at most a few KiB for 64 scopes. Errors: Internal when
// `key` is empty.
Result<std::string> IssueRegistryToken(std::string_view key, const RegistryTokenClaims& claims);

// Checks `token` against `key`, the expected `audience` and the clock `now` (unix seconds)
// and returns its claims. The MAC is compared in constant time before anything else in the
// token is read. Errors: Unauthorized for a malformed or tampered token, a token signed
// with another key, an expired one ("registry token expired"), or one issued for another
// service; also for an empty key.
Result<RegistryTokenClaims> VerifyRegistryToken(std::string_view key, std::string_view token,
                                                std::string_view audience, int64_t now);

// What the token endpoint hands out (oci.md §9.2 step 4).
struct IssuedRegistryToken {
  std::string token;
  RegistryTokenClaims claims;
  int64_t expires_in = 0;  // seconds
};

struct OciTokenOptions {
  std::string key;  // server secret, raw bytes; must not be empty
  // Token lifetime; raised to 60 s when lower (oci.md §9.2 step 4). No default of its own:
  // the token route copies OciAuthOptions::token_ttl (config oci.token_ttl_s).
  int64_t ttl_seconds = 0;
};

// Decides and signs the grants of the token endpoint (oci.md §9.2 steps 3–4). Stateless
// beyond its options; thread-safe when `access_for` is.
class OciTokenService {
 public:
  // The access `who` has to registry repository `name` (OciService::AccessFor: Write also
  // for a repository `who` may create). NameInvalid, RepoNotFound, NotFound, Forbidden,
  // Unauthorized and BadRequest count as "no access"; other errors fail the request.
  using AccessResolver = std::function<Result<Access>(const Principal&, std::string_view)>;

  OciTokenService(OciTokenOptions options, AccessResolver access_for);

  // A token for `who` and audience `service` granting, per requested resource, the
  // intersection of the requested and the allowed actions (GrantRepositoryActions for
  // repositories; `registry:catalog:*` to anyone, since the catalog is filtered per caller;
  // other types nothing). Partial or empty grants are not errors; resources granted
  // nothing are left out of the access list. Errors: Internal (empty key, or from
  // `access_for`).
  Result<IssuedRegistryToken> Issue(const Principal& who, std::string_view service,
                                    const std::vector<OciResourceAccess>& requested,
                                    int64_t now) const;

  int64_t ttl_seconds() const { return options_.ttl_seconds; }

 private:
  OciTokenOptions options_;
  AccessResolver access_for_;
};

}  // namespace hangar::services

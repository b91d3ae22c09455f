#include "services/oci/oci_token.h"

#include "core/base64.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>

namespace hangar::services {

namespace json = boost::json;

namespace {

constexpr std::string_view kPrefix = "hgroci1.";
// Keeps these MACs apart from anything else the server secret signs (LFS tickets, ...).
constexpr std::string_view kContext = "hangar-oci-registry-token-v1\n";
constexpr size_t kMaxScopes = 64;
// Far above what 64 scopes with 255-character names need; refused before any work.
constexpr size_t kMaxTokenSize = 64 * 1024;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsLowerAlnumRun(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsLowerAlnum);
}

Error BadScope(std::string_view scope, std::string_view why) {
  return MakeError(ErrorCode::BadRequest,
                   "invalid scope '" + std::string(scope) + "': " + std::string(why));
}

void AddUnique(std::vector<std::string>& v, std::string_view s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.emplace_back(s);
}

// base64url(HMAC-SHA256(key, kContext || signed_part)); "" when HMAC fails.
std::string Mac(std::string_view key, std::string_view signed_part) {
  std::string msg;
  msg.reserve(kContext.size() + signed_part.size());
  msg.append(kContext).append(signed_part);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac.data(),
           &len) == nullptr) {
    return {};
  }
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), len));
}

Error Invalid() { return MakeError(ErrorCode::Unauthorized, "invalid registry token"); }

json::object ClaimsToJson(const RegistryTokenClaims& c) {
  json::array access;
  for (const auto& a : c.access) {
    json::array actions;
    for (const auto& act : a.actions) actions.emplace_back(act);
    access.emplace_back(json::object{{"type", a.type}, {"name", a.name}, {"actions", actions}});
  }
  return json::object{{"anon", c.anonymous},
                      {"uid", c.user_id},
                      {"sub", c.user},
                      {"adm", c.is_admin},
                      {"role", c.role == TokenRole::Write ? "write" : "read"},
                      {"aud", c.audience},
                      {"iat", c.issued_at},
                      {"exp", c.expires_at},
                      {"access", std::move(access)}};
}

// The claims in `o`, or false when a field is missing or of the wrong kind. Only reached
// for payloads this server signed, so a failure means a format change, not an attack.
bool ClaimsFromJson(const json::object& o, RegistryTokenClaims& c) {
  auto get_bool = [&](std::string_view k, bool& out) {
    const json::value* v = o.if_contains(k);
    if (!v || !v->is_bool()) return false;
    out = v->get_bool();
    return true;
  };
  auto get_int = [&](std::string_view k, int64_t& out) {
    const json::value* v = o.if_contains(k);
    if (!v || !v->is_int64()) return false;
    out = v->get_int64();
    return true;
  };
  auto get_str = [](const json::object& obj, std::string_view k, std::string& out) {
    const json::value* v = obj.if_contains(k);
    if (!v || !v->is_string()) return false;
    out = std::string(v->get_string());
    return true;
  };
  std::string role;
  if (!get_bool("anon", c.anonymous) || !get_int("uid", c.user_id) || !get_str(o, "sub", c.user) ||
      !get_bool("adm", c.is_admin) || !get_str(o, "role", role) || !get_str(o, "aud", c.audience) ||
      !get_int("iat", c.issued_at) || !get_int("exp", c.expires_at)) {
    return false;
  }
  if (role != "read" && role != "write") return false;
  c.role = role == "write" ? TokenRole::Write : TokenRole::Read;
  const json::value* access = o.if_contains("access");
  if (!access || !access->is_array()) return false;
  for (const auto& entry : access->get_array()) {
    const json::object* e = entry.if_object();
    if (!e) return false;
    OciResourceAccess a;
    if (!get_str(*e, "type", a.type) || !get_str(*e, "name", a.name)) return false;
    const json::value* actions = e->if_contains("actions");
    if (!actions || !actions->is_array()) return false;
    for (const auto& act : actions->get_array()) {
      if (!act.is_string()) return false;
      a.actions.emplace_back(act.get_string());
    }
    c.access.push_back(std::move(a));
  }
  return true;
}

bool IsNoAccessError(ErrorCode code) {
  switch (code) {
    case ErrorCode::NameInvalid:
    case ErrorCode::RepoNotFound:
    case ErrorCode::NotFound:
    case ErrorCode::Forbidden:
    case ErrorCode::GatedRepo:  // a gated repo's files, not yet for this caller
    case ErrorCode::Unauthorized:
    case ErrorCode::BadRequest:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<OciResourceAccess> ParseOciScope(std::string_view scope) {
  size_t first = scope.find(':');
  size_t last = scope.rfind(':');
  if (first == std::string_view::npos || first == last) {
    return BadScope(scope, "expected type:name:actions");
  }
  std::string_view type = scope.substr(0, first);
  std::string_view name = scope.substr(first + 1, last - first - 1);
  std::string_view actions = scope.substr(last + 1);
  // resourcetype := [a-z0-9]+ [ "(" [a-z0-9]+ ")" ]; the class is deprecated: ignored.
  if (size_t open = type.find('('); open != std::string_view::npos) {
    if (type.back() != ')' || !IsLowerAlnumRun(type.substr(open + 1, type.size() - open - 2))) {
      return BadScope(scope, "bad resource class");
    }
    type = type.substr(0, open);
  }
  if (!IsLowerAlnumRun(type)) return BadScope(scope, "resource type must be [a-z0-9]+");
  if (name.empty()) return BadScope(scope, "empty resource name");
  OciResourceAccess out{std::string(type), std::string(name), {}};
  while (!actions.empty()) {
    size_t comma = actions.find(',');
    std::string_view action = actions.substr(0, comma);
    actions = comma == std::string_view::npos ? std::string_view{} : actions.substr(comma + 1);
    if (action.empty()) continue;
    if (action != "*" &&
        !std::all_of(action.begin(), action.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
      return BadScope(scope, "action '" + std::string(action) + "' must be [a-z]* or *");
    }
    AddUnique(out.actions, action);
  }
  return out;
}

Result<std::vector<OciResourceAccess>> ParseOciScopes(const std::vector<std::string>& values) {
  std::vector<OciResourceAccess> out;
  for (const auto& value : values) {
    std::string_view rest = value;
    while (!rest.empty()) {
      size_t space = rest.find(' ');
      std::string_view one = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
      if (one.empty()) continue;
      HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseOciScope(one));
      auto same = std::find_if(out.begin(), out.end(), [&](const OciResourceAccess& a) {
        return a.type == parsed.type && a.name == parsed.name;
      });
      if (same != out.end()) {
        for (const auto& act : parsed.actions) AddUnique(same->actions, act);
        continue;
      }
      if (out.size() == kMaxScopes) {
        return MakeError(ErrorCode::BadRequest,
                         "too many scopes (at most " + std::to_string(kMaxScopes) + ")");
      }
      out.push_back(std::move(parsed));
    }
  }
  return out;
}

std::string FormatOciScope(const OciResourceAccess& access) {
  std::string out = access.type + ":" + access.name + ":";
  for (size_t i = 0; i < access.actions.size(); ++i) {
    if (i) out += ',';
    out += access.actions[i];
  }
  return out;
}

bool OciAccessCovers(const std::vector<OciResourceAccess>& access, std::string_view type,
                     std::string_view name, std::string_view action) {
  for (const auto& a : access) {
    if (a.type != type || a.name != name) continue;
    for (const auto& act : a.actions) {
      if (act == action || act == "*") return true;
    }
  }
  return false;
}

std::vector<std::string> GrantRepositoryActions(const std::vector<std::string>& requested,
                                                Access allowed, const Principal& who) {
  std::vector<std::string> may;
  if (allowed != Access::None) may.emplace_back("pull");
  if ((allowed == Access::Write || allowed == Access::Admin) && who.CanWrite()) {
    may.emplace_back("push");
    may.emplace_back("delete");
  }
  std::vector<std::string> out;
  for (const auto& r : requested) {
    if (r == "*") {
      for (const auto& m : may) AddUnique(out, m);
    } else if (std::find(may.begin(), may.end(), r) != may.end()) {
      AddUnique(out, r);
    }
  }
  return out;
}

void RegistryTokenClaims::SetSubject(const Principal& who) {
  anonymous = who.anonymous;
  user_id = who.anonymous ? 0 : who.user_id;
  user = who.anonymous ? "" : who.name;
  is_admin = !who.anonymous && who.is_admin;
  role = who.anonymous ? TokenRole::Read : who.role;
}

Principal RegistryTokenClaims::ToPrincipal() const {
  if (anonymous) return Principal::Anonymous();
  return Principal::User(user_id, user, is_admin, role, "registry token");
}

bool IsRegistryToken(std::string_view token) { return token.starts_with(kPrefix); }

Result<std::string> IssueRegistryToken(std::string_view key, const RegistryTokenClaims& claims) {
  if (key.empty()) return MakeError(ErrorCode::Internal, "no server secret to sign tokens with");
  std::string token(kPrefix);
  token += Base64UrlEncode(json::serialize(ClaimsToJson(claims)));
  std::string mac = Mac(key, token);
  if (mac.empty()) return MakeError(ErrorCode::Internal, "HMAC failed");
  token += '.';
  token += mac;
  return token;
}

Result<RegistryTokenClaims> VerifyRegistryToken(std::string_view key, std::string_view token,
                                                std::string_view audience, int64_t now) {
  if (key.empty() || !IsRegistryToken(token) || token.size() > kMaxTokenSize) return Invalid();
  size_t dot = token.rfind('.');
  if (dot < kPrefix.size()) return Invalid();
  std::string_view signed_part = token.substr(0, dot);
  std::string_view mac = token.substr(dot + 1);
  std::string expected = Mac(key, signed_part);
  if (expected.empty()) return MakeError(ErrorCode::Internal, "HMAC failed");
  if (mac.size() != expected.size() ||
      CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) != 0) {
    return Invalid();
  }
  // Only now, with the MAC checked, is the payload trusted.
  auto payload = Base64UrlDecode(signed_part.substr(kPrefix.size()));
  if (!payload) return Invalid();
  boost::system::error_code ec;
  json::value v = json::parse(*payload, ec);
  RegistryTokenClaims c;
  if (ec || !v.is_object() || !ClaimsFromJson(v.get_object(), c)) return Invalid();
  if (now >= c.expires_at) {
    return MakeError(ErrorCode::Unauthorized, "registry token expired; fetch a new one");
  }
  if (c.audience != audience) {
    return MakeError(ErrorCode::Unauthorized, "registry token was issued for service '" +
                                                  c.audience + "', not '" + std::string(audience) +
                                                  "'");
  }
  return c;
}

OciTokenService::OciTokenService(OciTokenOptions options, AccessResolver access_for)
    : options_(std::move(options)), access_for_(std::move(access_for)) {
  options_.ttl_seconds = std::max<int64_t>(options_.ttl_seconds, 60);
}

Result<IssuedRegistryToken> OciTokenService::Issue(const Principal& who, std::string_view service,
                                                   const std::vector<OciResourceAccess>& requested,
                                                   int64_t now) const {
  IssuedRegistryToken out;
  RegistryTokenClaims& c = out.claims;
  c.SetSubject(who);
  c.audience = std::string(service);
  c.issued_at = now;
  c.expires_at = now + options_.ttl_seconds;
  for (const auto& want : requested) {
    OciResourceAccess granted{want.type, want.name, {}};
    if (want.type == "repository") {
      auto allowed = access_for_(who, want.name);
      if (!allowed && !IsNoAccessError(allowed.error().code)) return std::move(allowed).error();
      granted.actions =
          GrantRepositoryActions(want.actions, allowed ? *allowed : Access::None, who);
    } else if (want.type == "registry" && want.name == "catalog") {
      for (const auto& act : want.actions) {
        if (act == "*") granted.actions.emplace_back("*");
      }
    }
    if (!granted.actions.empty()) c.access.push_back(std::move(granted));
  }
  HANGAR_ASSIGN_OR_RETURN(out.token, IssueRegistryToken(options_.key, c));
  out.expires_in = options_.ttl_seconds;
  return out;
}

}  // namespace hangar::services

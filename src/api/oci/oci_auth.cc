#include "api/oci/oci_auth.h"

#include <openssl/evp.h>
#include <strings.h>

#include <algorithm>
#include <boost/json.hpp>

#include "core/util.h"
#include "services/oci/oci_token.h"

namespace hangar::api {

namespace {

// The credentials of a "Bearer <token>" header (scheme case-insensitive, RFC 6750 §2.1),
// or "" for any other header.
std::string_view BearerCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() <= kScheme.size() ||
      strncasecmp(header.data(), kScheme.data(), kScheme.size()) != 0) {
    return {};
  }
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

// True for "Basic base64(<user>:)" — an empty password. containers/image (skopeo, podman)
// sends "Basic Og==" when it has no credentials for a Basic challenge: that is anonymous.
bool IsEmptyBasic(std::string_view header) {
  constexpr std::string_view kScheme = "Basic ";
  if (header.size() <= kScheme.size() ||
      strncasecmp(header.data(), kScheme.data(), kScheme.size()) != 0) {
    return false;
  }
  std::string_view b64 = header.substr(kScheme.size());
  while (!b64.empty() && b64.front() == ' ') b64.remove_prefix(1);
  while (!b64.empty() && b64.back() == ' ') b64.remove_suffix(1);
  if (b64.empty() || b64.size() % 4 != 0 || b64.size() > 1024) return false;
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return false;
  size_t pad = b64.ends_with("==") ? 2 : b64.ends_with("=") ? 1 : 0;
  out.resize(static_cast<size_t>(n) - pad);
  size_t colon = out.find(':');
  return colon != std::string::npos && colon + 1 == out.size();
}

// `s` as the inside of an RFC 9110 quoted-string.
std::string QuotedStringBody(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  }
  return out;
}

}  // namespace

std::string_view OciActionName(OciAction a) {
  switch (a) {
    case OciAction::Pull:
      return "pull";
    case OciAction::Push:
      return "push";
    case OciAction::Delete:
      return "delete";
  }
  return "pull";
}

OciAuth::OciAuth(HubAuthenticator hub, OciAuthOptions options)
    : hub_(std::move(hub)), options_(std::move(options)) {
  // oci.md §9.2 step 4: clients assume 60 s when told less, so never issue less.
  options_.token_ttl = std::max(options_.token_ttl, std::chrono::seconds(60));
}
OciAuth::~OciAuth() = default;

Result<Principal> OciAuth::HubCaller(const http::Request& req) const {
  if (IsEmptyBasic(req.Header("authorization"))) return Principal::Anonymous();
  HANGAR_ASSIGN_OR_RETURN(Principal who, hub_(req));
  // A credential bound to one repo (git-lfs-authenticate's, issue 18) opens git and LFS
  // only: the registry neither takes it nor mints tokens for it.
  if (who.repo_scope != 0) {
    return MakeError(ErrorCode::Unauthorized,
                     "this credential is valid only for git and LFS on one repo");
  }
  return who;
}

std::string OciAuth::Service(const http::Request& req) const {
  return options_.service.empty() ? std::string(req.Header("host")) : options_.service;
}

std::string OciAuth::ChallengeScope(std::string_view name, OciAction action) {
  if (name.empty()) return {};
  std::string scope = "repository:" + std::string(name) + ":";
  switch (action) {
    case OciAction::Pull:
      return scope + "pull";
    case OciAction::Push:
      return scope + "pull,push";  // a push reads too (HEAD of blobs, mounts)
    case OciAction::Delete:
      return scope + "delete";
  }
  return scope + "pull";
}

// A registry token (our prefix after "Bearer ") is checked here and never reaches the hub
// authenticator; anything else — hub tokens as Basic or Bearer, or no header — is the hub's.
Result<Principal> OciAuth::Caller(const http::Request& req, std::string_view name,
                                  OciAction action) const {
  std::string_view bearer = BearerCredentials(req.Header("authorization"));
  if (!services::IsRegistryToken(bearer)) return HubCaller(req);
  HANGAR_ASSIGN_OR_RETURN(
      auto claims, services::VerifyRegistryToken(options_.secret, bearer, Service(req), NowUnix()));
  // /v2/ and the catalog take any valid token: what the catalog lists is filtered per caller.
  if (!name.empty() &&
      !services::OciAccessCovers(claims.access, "repository", name, OciActionName(action))) {
    return MakeError(ErrorCode::Unauthorized, "registry token does not grant " +
                                                  std::string(OciActionName(action)) + " on " +
                                                  std::string(name) + "; fetch a token for scope " +
                                                  ChallengeScope(name, action));
  }
  return claims.ToPrincipal();
}

http::Response OciAuth::Unauthorized(const http::Request& req, std::string_view name,
                                     OciAction action, std::string_view message) const {
  namespace json = boost::json;
  auto res = http::Response::Json(
      401, json::serialize(json::object{
               {"errors", json::array{json::object{{"code", "UNAUTHORIZED"},
                                                   {"message", std::string(message)}}}}}));
  if (!options_.bearer_challenge) {
    res.SetHeader("WWW-Authenticate", "Basic realm=\"Hangar\"");
    return res;
  }
  // oci.md §9.2 step 2 (RFC 6750 §3).
  std::string challenge = "Bearer realm=\"" + QuotedStringBody(req.base_url) +
                          "/v2/token\",service=\"" + QuotedStringBody(Service(req)) + "\"";
  if (std::string scope = ChallengeScope(name, action); !scope.empty()) {
    challenge += ",scope=\"" + QuotedStringBody(scope) + "\"";
  }
  res.SetHeader("WWW-Authenticate", std::move(challenge));
  return res;
}

}  // namespace hangar::api

// The registry token endpoint (oci.md §9.2):
//   GET  /v2/token?service=S&scope=A&scope=B[&offline_token=true][&account=U]
//        with optional Basic (any user, hub token as password) or Bearer hub credentials;
//   POST /v2/token with the OAuth2 form: grant_type=password (username, password = hub
//        token), service, scope (space-separated), client_id.
// Refresh tokens are not issued (offline_token is accepted and ignored), so the POST form's
// grant_type=refresh_token is refused as unsupported; clients then use their credentials.

#include <boost/json.hpp>
#include <memory>

#include "api/oci/oci_auth.h"
#include "core/util.h"
#include "services/oci/oci_service.h"
#include "services/oci/oci_token.h"

namespace hangar::api {

namespace {

namespace json = boost::json;

constexpr size_t kMaxFormBytes = 64 * 1024;

struct TokenRequest {
  std::string service;  // "" = not given
  std::vector<std::string> scopes;
};

// Issues the token for `who`; errors are BadRequest (scope, service) or Internal.
Result<services::IssuedRegistryToken> Issue(const OciAuth& auth,
                                            const services::OciTokenService& tokens,
                                            const http::Request& req, const Principal& who,
                                            const TokenRequest& want) {
  std::string service = auth.Service(req);
  if (!want.service.empty() && want.service != service) {
    return MakeError(ErrorCode::BadRequest,
                     "unknown service '" + want.service + "'; this registry is '" + service + "'");
  }
  HANGAR_ASSIGN_OR_RETURN(auto scopes, services::ParseOciScopes(want.scopes));
  return tokens.Issue(who, service, scopes, NowUnix());
}

std::string GrantedScope(const services::RegistryTokenClaims& c) {
  std::string out;
  for (const auto& a : c.access) {
    if (!out.empty()) out += ' ';
    out += services::FormatOciScope(a);
  }
  return out;
}

// GET: the Docker token protocol; errors are rendered as OCI errors.
Result<http::Response> GetToken(const OciAuth& auth, const services::OciTokenService& tokens,
                                http::Request& req) {
  auto who = auth.HubCaller(req);
  if (!who) {
    http::Response res = auth.Unauthorized(req, "", OciAction::Pull, who.error().message);
    // The realm itself takes Basic credentials: say so rather than point at itself.
    res.SetHeader("WWW-Authenticate", "Basic realm=\"Hangar\"");
    return res;
  }
  TokenRequest want{req.Query("service").value_or(""), req.QueryAll("scope")};
  HANGAR_ASSIGN_OR_RETURN(auto issued, Issue(auth, tokens, req, *who, want));
  json::object body{{"token", issued.token},
                    {"access_token", issued.token},
                    {"expires_in", issued.expires_in},
                    {"issued_at", Iso8601(issued.claims.issued_at)}};
  auto res = http::Response::Json(200, json::serialize(body));
  res.SetHeader("Cache-Control", "no-store");
  return res;
}

http::Response OAuthError(int status, std::string_view error, std::string_view description) {
  auto res = http::Response::Json(
      status, json::serialize(json::object{{"error", error}, {"error_description", description}}));
  res.SetHeader("Cache-Control", "no-store");
  return res;
}

// POST: the OAuth2 password grant (RFC 6749 §4.3); errors in OAuth2's shape (§5.2).
Result<http::Response> PostToken(const OciAuth& auth, const services::OciTokenService& tokens,
                                 http::Request& req) {
  if (!req.Header("content-type").starts_with("application/x-www-form-urlencoded")) {
    return OAuthError(400, "invalid_request", "expected an application/x-www-form-urlencoded body");
  }
  auto body = req.ReadBody(kMaxFormBytes);
  if (!body) return OAuthError(400, "invalid_request", body.error().message);
  // A form body is encoded exactly like a query string: reuse the query parser.
  http::Request form;
  form.query = std::move(*body);
  std::string grant = form.Query("grant_type").value_or("");
  if (grant == "refresh_token") {
    return OAuthError(400, "unsupported_grant_type",
                      "refresh tokens are not issued; use grant_type=password");
  }
  if (grant != "password") {
    return OAuthError(400, "unsupported_grant_type",
                      "grant_type must be 'password' (got '" + grant + "')");
  }
  std::string password = form.Query("password").value_or("");
  if (password.empty()) {
    return OAuthError(400, "invalid_request", "password (a hub token) is required");
  }
  // Authenticate the hub token through the hub authenticator, as a Bearer header would.
  http::Request creds;
  creds.headers.emplace_back("authorization", "Bearer " + password);
  auto who = auth.hub()(creds);
  if (!who) return OAuthError(401, "invalid_grant", who.error().message);
  TokenRequest want{form.Query("service").value_or(""), form.QueryAll("scope")};
  auto issued = Issue(auth, tokens, req, *who, want);
  if (!issued) {
    if (issued.error().code != ErrorCode::BadRequest) return std::move(issued).error();
    return OAuthError(400, "invalid_scope", issued.error().message);
  }
  json::object out{{"access_token", issued->token},
                   {"token_type", "Bearer"},
                   {"expires_in", issued->expires_in},
                   {"issued_at", Iso8601(issued->claims.issued_at)},
                   {"scope", GrantedScope(issued->claims)}};
  auto res = http::Response::Json(200, json::serialize(out));
  res.SetHeader("Cache-Control", "no-store");
  return res;
}

}  // namespace

void AddOciTokenRoute(http::Router& router, const OciAuth& auth, services::OciService& registry) {
  services::OciTokenOptions options;
  options.key = auth.options().secret;
  options.ttl_seconds = auth.options().token_ttl.count();
  auto tokens = std::make_shared<services::OciTokenService>(
      std::move(options), [&registry](const Principal& who, std::string_view name) {
        return registry.AccessFor(who, name);
      });
  // Registry, with a check that admits all: the handlers read the credentials themselves,
  // so that a bad header is answered by the token protocol rather than by the router, and
  // POST's are in its form body (which, from an anonymous caller, must fit the read-ahead).
  const auto own = http::Requirement::Registry(
      [](http::Request&) -> std::optional<http::Response> { return std::nullopt; });
  router.Add(http::Method::Get, "/v2/token", http::ApiFamily::Oci, own,
             [&auth, tokens](http::Request& req) { return GetToken(auth, *tokens, req); });
  router.Add(http::Method::Post, "/v2/token", http::ApiFamily::Oci, own,
             [&auth, tokens](http::Request& req) { return PostToken(auth, *tokens, req); });
}

}  // namespace hangar::api

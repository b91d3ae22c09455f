#pragma once
// OciAuth: who is calling the registry (oci.md §9). Accepts hub tokens sent as Basic
// (any user name, the token as password) or Bearer, and — once the token flow is on —
// the registry's own short-lived scoped tokens from /v2/token. Builds the 401 answers and
// their WWW-Authenticate challenges. OCI routes are registered with Requirement::Registry,
// whose check (oci::AdmitCaller) calls Caller() from the head, so that a registry token is
// never mistaken for a hub token.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "core/principal.h"
#include "core/result.h"
#include "http/request.h"
#include "http/response.h"
#include "http/router.h"

namespace hangar::services {
class OciService;
}

namespace hangar::api {

// What a request does to a registry repository (token scopes' actions, oci.md §9.2).
enum class OciAction { Pull, Push, Delete };

// "pull", "push", "delete".
std::string_view OciActionName(OciAction a);

struct OciAuthOptions {
  // The token service name (the `service` of challenges and tokens), e.g. "127.0.0.1:8080".
  // Empty: the request's Host.
  std::string service;
  // Challenge with Bearer (the /v2/token flow) rather than Basic (config oci.challenge =
  // "bearer", its default there: this struct has none of its own, cli's App sets it).
  bool bearer_challenge = false;
  // Key that signs registry tokens (the server secret, raw bytes).
  std::string secret;
  // Lifetime of registry tokens, never below 60 s (oci.md §9.2 step 4; config
  // oci.token_ttl_s).
  std::chrono::seconds token_ttl{0};
};

// Turns a request's hub credentials ("Basic"/"Bearer" hub tokens) into a Principal,
// anonymous when none were sent. Errors: Unauthorized.
using HubAuthenticator = std::function<Result<Principal>(const http::Request&)>;

// Thread-safe after construction.
class OciAuth {
 public:
  // `hub` resolves hub credentials (App's authenticator: "Basic"/"Bearer" hub tokens).
  OciAuth(HubAuthenticator hub, OciAuthOptions options);
  ~OciAuth();

  // The caller of `req`, acting on repository `name` ("" for /v2/ and the catalog) with
  // `action`. Anonymous when no Authorization was sent. Errors: Unauthorized for bad
  // credentials, or a registry token that does not cover `name`/`action` (expired, other
  // repo, fewer actions); answer it with Unauthorized() below.
  Result<Principal> Caller(const http::Request& req, std::string_view name, OciAction action) const;

  // A 401 UNAUTHORIZED answer for `req` with `message` and the challenge for
  // `name`/`action` (Bearer with realm, service and scope; or Basic).
  http::Response Unauthorized(const http::Request& req, std::string_view name, OciAction action,
                              std::string_view message) const;

  // The hub credentials of `req` through the hub authenticator; no header, or Basic with an
  // empty password (what containers/image sends without credentials), is anonymous.
  // Errors: Unauthorized from the hub authenticator.
  Result<Principal> HubCaller(const http::Request& req) const;

  // The token service name for `req`: options().service, or the request's Host when that
  // is empty. Registry tokens are issued for, and only accepted by, this audience.
  std::string Service(const http::Request& req) const;

  // The scope a request for `name`/`action` needs, as challenges carry it:
  // "repository:<name>:pull" (Pull), "...:pull,push" (Push), "...:delete" (Delete); "" for
  // `name` "" (/v2/ itself).
  static std::string ChallengeScope(std::string_view name, OciAction action);

  const OciAuthOptions& options() const { return options_; }
  const HubAuthenticator& hub() const { return hub_; }

 private:
  HubAuthenticator hub_;
  OciAuthOptions options_;
};

// Registers the token endpoint `GET /v2/token` (and `POST` for the OAuth2 form) that
// exchanges hub credentials for a scoped registry token (oci.md §9.2). Call before the
// /v2/ routes. `registry` decides what a principal may do to a repository.
void AddOciTokenRoute(http::Router& router, const OciAuth& auth, services::OciService& registry);

}  // namespace hangar::api

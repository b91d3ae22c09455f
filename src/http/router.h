#pragma once
// Router: a table of routes (method + path pattern → who may call it → handler), like
// cgit's cmd.c. Matches on the raw, still percent-encoded path (hf-api.md §1.4 rule 1),
// authenticates, enforces the route's declared Requirement from the request head alone
// (issue 13 point 1; DESIGN.md "every route declares who may call it"), then runs the
// handler and renders errors in the route's API family.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::http {

// Which protocol's error shape a route speaks (STYLE.md §3).
enum class ApiFamily { Hf, Git, Lfs, Oci, Viewer, Mlflow, OpenAi, Html, Plain };

// A handler: blocking; runs on the worker pool, never on an I/O thread.
using Handler = std::function<Result<Response>(Request&)>;

// The kinds of Requirement (see its factories for what each admits).
enum class Gate { Public, SignedIn, Session, WriteRole, Repo, Ticket, Registry };

// A route's check of a credential of its own (a ticket in the URL, a registry token), run
// by the router from the request head before the handler and before any body byte is
// read: nullopt admits (it may set req.principal), an answer refuses the request.
using OwnCheck = std::function<std::optional<Response>(Request&)>;

// A route's further rule that the request head decides (the upload the URL names is the
// caller's), run by the router once the Requirement admitted the caller (req.principal
// set) and before any body byte is read. An error refuses the request, rendered in the
// route's family.
using HeadCheck = std::function<Result<void>(Request&)>;

// What a route needs of its caller, declared in its route-table entry and checked by the
// router before the handler runs (and so before a body byte is read). Built only through
// the factories (the constructor is private), so no route can be added without one.
// Refusals: Unauthorized (401) for an anonymous caller where a user is needed, Forbidden
// (403) for too little, and for repo routes what the injected RepoAuthorizer answers
// (RepoNotFound for a repo the caller may not know of).
struct Requirement {
  Gate gate;
  RepoType repo_type;  // Repo: the type the route's URL names
  Access access;       // Repo: the level needed on it
  // Repo: an anonymous caller refused (also with RepoNotFound) gets Unauthorized, so git
  // and git-lfs send credentials (git-lfs.md §6, §11.3); missing and private repos answer
  // the same, which reveals nothing.
  bool challenge;
  // Repo: {name} may end in git's ".git" suffix (hf-api.md §10.1), stripped for the check.
  bool git_suffix;
  // Ticket, Registry: the route's own check (always set). Repo: when set, a `ticket`
  // query parameter runs it instead of the repo check.
  OwnCheck own;
  // The handler may wait in a queue (see Waits()).
  bool waits = false;
  // Checked after the rest admitted the caller (see Also()); empty: none.
  HeadCheck also;

  // This requirement, for a handler that may wait in a queue (git pack slots, password
  // hashing, heavy searches): the server runs it on a thread of its own, so that waiting
  // holds no shared worker (limits.streaming_bodies bounds those threads).
  Requirement Waits() const {
    Requirement r = *this;
    r.waits = true;
    return r;
  }

  // This requirement and then `check`, for a rule the head decides that only the route
  // knows: so that a body is never read for a request the handler would refuse at once.
  Requirement Also(HeadCheck check) const {
    Requirement r = *this;
    r.also = std::move(check);
    return r;
  }

  // Anyone. Credentials, when sent, are still checked (a bad token is 401).
  static Requirement Public() { return Requirement(Gate::Public); }
  // A signed-in user, by browser session or by a token of any role.
  static Requirement SignedIn() { return Requirement(Gate::SignedIn); }
  // A user signed in by a browser session; bearer tokens are refused (403) whatever their
  // role. For account-level actions: creating and revoking tokens, org administration and
  // other settings forms (docs/web.md "Who may call what").
  static Requirement Session() { return Requirement(Gate::Session); }
  // A user whose credential may write: a browser session or a write token.
  static Requirement WriteRole() { return Requirement(Gate::WriteRole); }
  // `access` on the repo of type `type` named by the route's {ns} and {name} parameters.
  static Requirement Repo(RepoType type, Access access) {
    return Requirement(Gate::Repo, type, access);
  }
  // As Repo, for git and git-lfs clients: anonymous refusals challenge (see `challenge`).
  static Requirement RepoChallenge(RepoType type, Access access, bool git_suffix = false) {
    return Requirement(Gate::Repo, type, access, true, git_suffix);
  }
  // As RepoChallenge (with the ".git" suffix), or, when the query has a `ticket`, `check`
  // instead: an LFS verify href (git-lfs.md §11.4) is called with the upload's ticket and
  // maybe no credentials.
  static Requirement RepoOrTicket(RepoType type, Access access, OwnCheck check) {
    Requirement r(Gate::Repo, type, access, true, true);
    r.own = std::move(check);
    return r;
  }
  // The request carries its own proof, a signed short-lived ticket in the path (LFS
  // transfer hrefs), which `check` verifies. Authorization is not looked at and the
  // principal stays anonymous.
  static Requirement Ticket(OwnCheck check) {
    Requirement r(Gate::Ticket);
    r.own = std::move(check);
    return r;
  }
  // The OCI registry's own credentials (hub tokens as Basic/Bearer, or /v2/token registry
  // tokens; oci.md §9), which `check` resolves into req.principal and checks against the
  // repository and action the request names; the router does not authenticate.
  static Requirement Registry(OwnCheck check) {
    Requirement r(Gate::Registry);
    r.own = std::move(check);
    return r;
  }

 private:
  explicit Requirement(Gate g, RepoType type = RepoType::Model, Access a = Access::Read,
                       bool challenge_anonymous = false, bool strip_git = false)
      : gate(g),
        repo_type(type),
        access(a),
        challenge(challenge_anonymous),
        git_suffix(strip_git) {}
};

// The WriteRole gate's check of `who`, for a head check (Requirement::Also) that adds it to
// a Repo gate. Errors: Unauthorized (anonymous), Forbidden (a read token).
Result<void> CheckWriteRole(const Principal& who);

// "public", "signed-in", "session", "write-role", "repo:write", "ticket", "registry"...,
// with "+check" when the route has a head check of its own (Also()); for tests and logs.
std::string RequirementName(const Requirement& need);

// Pattern syntax: segments separated by '/'. A literal segment matches itself; `{name}`
// matches one non-empty segment; a final `{name*}` matches the rest of the path (possibly
// empty, '/'s included). Parameters keep their raw, percent-encoded text.
struct Route {
  Method method;
  std::string pattern;
  ApiFamily api;
  Requirement need;
  Handler handler;
};

// Turns a request's credentials into a Principal for `route` (anonymous when none were
// sent); errors (Unauthorized) are rendered in the route's family and the handler is not
// run. Not called for Ticket and Registry routes.
using Authenticator = std::function<Result<Principal>(const Request&, const Route&)>;

// Whether `who` has `needed` on the repo (`type`, `ns`, `name`; percent-decoded, ".git"
// stripped where the route allows it). Errors as services::RepoService::Open: BadRequest
// (bad name), RepoNotFound (also for repos `who` may not read), Unauthorized, Forbidden.
using RepoAuthorizer =
    std::function<Result<void>(const Principal& who, RepoType type, std::string_view ns,
                               std::string_view name, Access needed)>;

// Renders `err` for `req` in family `api` (api/error_render.cc).
using ErrorRenderer = std::function<Response(ApiFamily, const Error&, const Request&)>;

// The first phase's outcome, decided from the request head alone.
struct Admission {
  const Route* route = nullptr;    // set when the handler may run
  std::optional<Response> answer;  // set when the request is answered without its handler
                                   // (404, 405, 401, 403, CORS preflight)
};

// Build once at start-up, then read-only: Admit, Run and Dispatch are thread-safe.
class Router {
 public:
  // Adds a route needing `need`; earlier routes win when several match. A Repo
  // requirement on a pattern without {ns} and {name}, or a Ticket or Registry one without
  // its check, is a programming error: aborts.
  void Add(Method method, std::string pattern, ApiFamily api, Requirement need, Handler handler);
  void SetAuthenticator(Authenticator a) { authenticate_ = std::move(a); }
  // Without one, every Repo route is refused (Internal): the gate fails closed.
  void SetRepoAuthorizer(RepoAuthorizer a) { authorize_repo_ = std::move(a); }
  void SetErrorRenderer(ErrorRenderer r) { render_ = std::move(r); }

  // Matches, authenticates and authorizes `req` from its method, path and headers alone
  // (sets req.params and req.principal); never reads the body. Thread-safe.
  Admission Admit(Request& req) const;
  // Runs the admitted route's handler, renders its errors (a leaked exception becomes
  // Internal). `a` must come from Admit(req) with no answer. Thread-safe.
  Response Run(const Admission& a, Request& req) const;
  // Admit, then Run when admitted. Every response carries X-Request-Id, and CORS headers
  // when the request had an Origin.
  Response Dispatch(Request& req) const;

  // Renders `err` for `req` as a response in family `api` (used by the server for
  // protocol-level failures such as oversized headers).
  Response Render(ApiFamily api, const Error& err, const Request& req) const;

  // Every route, in matching order (tests/cli/authz_matrix_test.cc walks it).
  const std::vector<Route>& Routes() const { return routes_; }
  // The route Admit would pick for `method` and the raw `path`, or null (no params set).
  const Route* Find(Method method, std::string_view path) const;

 private:
  // The route for `path` and `method`, or null; `path_matched` tells a 405 from a 404.
  const Route* Match(Method method, std::string_view path,
                     std::vector<std::pair<std::string, std::string>>& params,
                     bool& path_matched) const;
  // The methods some route takes at `path`, for a 405's Allow header: "GET, HEAD, OPTIONS".
  std::string AllowedMethods(std::string_view path) const;
  // Checks `route.need` against req.principal. Errors: as Requirement says.
  Result<void> Authorize(const Route& route, const Request& req) const;
  // Adds X-Request-Id and the CORS headers to `res`.
  void Finish(const Request& req, Response& res) const;

  std::vector<Route> routes_;
  std::vector<std::vector<std::string>> segments_;  // per route: literal, "{x}" or "{x*}"
  Authenticator authenticate_;
  RepoAuthorizer authorize_repo_;
  ErrorRenderer render_;
};

}  // namespace hangar::http

// Gated repos on the web (issue 19 §1, docs/gating.md): the gate box of a gated repo's
// home page (ask for access, with the card's extra_gated_fields; or the request's state),
// its POST …/ask-access (also the public hub's API for a token's holder), and the access
// requests on the repo's settings page (accept, reject with a reason, back to pending,
// grant). Rules live in services::GateService and RepoService::CheckGate.

#include <boost/json.hpp>

#include "core/util.h"
#include "services/repo/gate_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

Result<services::GateService*> Gates(WebDeps& deps) {
  if (!deps.gates) return MakeError(ErrorCode::NotFound, "gated repos are not available here");
  return deps.gates;
}

// The body of an ask-access POST: a browser's form carries the session's CSRF token
// (ReadForm checks it); a token's holder posts the form's fields, or nothing, without one
// (a bearer token is no cookie a third-party page could make a browser send).
// The largest ask-access body: 20 fields of up to 2,000 bytes, percent-encoded.
constexpr size_t kMaxAskBody = 64 << 10;

Result<services::GateFields> AskFields(http::Request& req, const PageContext& ctx) {
  if (!ctx.principal.session &&
      !req.Header("content-type").starts_with("application/x-www-form-urlencoded")) {
    // A gate without a form is asked with an empty POST.
    HANGAR_ASSIGN_OR_RETURN(std::string body, req.ReadBody(kMaxAskBody));
    if (!body.empty()) {
      return MakeError(ErrorCode::BadRequest,
                       "send the gate form's fields as a form (application/x-www-form-urlencoded)");
    }
    return services::GateFields{};
  }
  Form form;
  if (ctx.principal.session) {
    HANGAR_ASSIGN_OR_RETURN(form, ReadForm(req, ctx));
  } else {
    HANGAR_ASSIGN_OR_RETURN(form, ParseForm(req));
  }
  services::GateFields fields;
  for (auto& [k, v] : form.fields) {
    if (k != "_csrf") fields.emplace_back(std::move(k), std::move(v));
  }
  return fields;
}

Result<http::Response> AskAccess(WebDeps& deps, PageContext& ctx, http::Request& req,
                                 RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* gates, Gates(deps));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  HANGAR_ASSIGN_OR_RETURN(auto fields, AskFields(req, ctx));
  HANGAR_ASSIGN_OR_RETURN(auto request, gates->Ask(ctx.principal, id, fields));
  if (ctx.principal.session) return SeeOther(ctx, RepoPath(id));
  boost::json::object out{{"status", db::AccessStatusName(request.status)}};
  http::Response res = http::Response::Text(200, boost::json::serialize(out), "application/json");
  return res;
}

Result<http::Response> HandleRequest(WebDeps& deps, PageContext& ctx, http::Request& req,
                                     RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* gates, Gates(deps));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"user", "status", "reason"}));
  const std::string user = form.Get("user");
  if (form.Get("status") == "grant") {
    HANGAR_TRY(gates->Grant(ctx.principal, id, user));
  } else {
    auto status = db::ParseAccessStatus(form.Get("status"));
    if (!status) return MakeError(ErrorCode::BadRequest, "status: accepted, rejected or pending");
    HANGAR_TRY(gates->Handle(ctx.principal, id, user, *status, form.Get("reason")));
  }
  return SeeOther(ctx, RepoPath(id) + "/settings#access-requests");
}

}  // namespace

Result<void> SetGate(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                     const std::string& prompt,
                     const std::vector<std::pair<std::string, std::string>>& fields, Data& data) {
  if (repo.record.gated.empty() || !deps.gates) return {};
  Data gate;
  gate.set("manual", repo.record.gated == "manual");
  gate.set("ask_url", RepoPath(repo.record.Id()) + "/ask-access");
  if (!prompt.empty()) gate.set("prompt", prompt);
  auto passes = deps.repos.CheckGate(ctx.principal, repo.record);
  HANGAR_ASSIGN_OR_RETURN(auto mine, deps.gates->RequestOf(ctx.principal, repo.record));
  if (!ctx.signed_in) {
    gate.set("sign_in", "/login?next=" + EncodeSegment(RepoPath(repo.record.Id())));
  } else if (mine) {
    gate.set(std::string(db::AccessStatusName(mine->status)), true);
    if (!mine->reason.empty()) gate.set("reason", mine->reason);
  } else if (passes) {
    gate.set("member", true);
  } else {
    List items;
    for (const auto& [label, kind] : fields) {
      Data f;
      f.set("label", label);
      f.set("checkbox", kind == "checkbox");
      items.push_back(f);
    }
    gate.set("fields", items);
    gate.set("can_ask", true);
  }
  data.set("gate", gate);
  return {};
}

Result<void> SetAccessRequests(WebDeps& deps, const PageContext& ctx,
                               const services::RepoHandle& repo, Data& data) {
  data.set("gated_" + (repo.record.gated.empty() ? std::string("off") : repo.record.gated), true);
  if (repo.record.gated.empty() || !deps.gates) return {};
  for (auto status :
       {db::AccessStatus::Pending, db::AccessStatus::Accepted, db::AccessStatus::Rejected}) {
    HANGAR_ASSIGN_OR_RETURN(auto page,
                            deps.gates->List(ctx.principal, repo.record.Id(), status, "", 1000));
    List items;
    for (const auto& r : page.items) {
      Data o;
      o.set("user", r.user_name);
      o.set("email", r.user_email);
      o.set("when", Ago(r.created_at));
      o.set("reason", r.reason);
      o.set("granted", r.granted);
      std::string shown;
      boost::system::error_code ec;
      auto fields = boost::json::parse(r.fields, ec);
      if (!ec && fields.is_object()) {
        for (const auto& f : fields.as_object()) {
          if (!shown.empty()) shown += " · ";
          shown += std::string(f.key()) + ": " +
                   (f.value().is_string() ? std::string(f.value().as_string())
                                          : boost::json::serialize(f.value()));
        }
      }
      o.set("fields", shown);
      items.push_back(o);
    }
    data.set("requests_" + std::string(db::AccessStatusName(status)), items);
  }
  data.set("gated", true);
  return {};
}

void AddGatePages(http::Router& router, WebDeps& deps, RepoType type) {
  using M = http::Method;
  const std::string repo = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}";
  // Who may read what the repo shows asks; the service refuses anonymous callers.
  // The gate form is small: a larger body is refused from the head.
  auto small = [](http::Request& q) { return http::CheckDeclaredLength(q, kMaxAskBody); };
  AddPage(router, deps, M::Post, repo + "/ask-access", http::Requirement::SignedIn().Also(small),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return AskAccess(deps, ctx, req, type);
          });
  AddPage(router, deps, M::Post, repo + "/settings/access-requests",
          http::Requirement::Repo(type, Access::Write),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return HandleRequest(deps, ctx, req, type);
          });
}

}  // namespace hangar::web

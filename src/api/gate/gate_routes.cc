// Access request handlers (docs/gating.md): parse, call GateService, render.

#include "api/gate/gate_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::GateService;

constexpr size_t kMaxBody = 16 << 10;

json::object RequestJson(const db::AccessRequestRecord& r) {
  json::object user{{"user", r.user_name},
                    {"fullname", r.user_fullname.empty() ? r.user_name : r.user_fullname},
                    {"type", "user"}};
  user["email"] = r.user_email.empty() ? json::value(nullptr) : json::value(r.user_email);
  json::object o{{"user", std::move(user)},
                 {"status", db::AccessStatusName(r.status)},
                 {"timestamp", Iso8601(r.created_at)}};
  if (!r.fields.empty()) {
    boost::system::error_code ec;
    json::value fields = json::parse(r.fields, ec);
    if (!ec) o["fields"] = std::move(fields);
  }
  if (!r.reason.empty()) o["rejectionReason"] = r.reason;
  return o;
}

// The body of handle or grant: only `known` fields, `user` a non-empty string.
Result<json::object> ReadBody(http::Request& req, std::initializer_list<std::string_view> known) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadJsonObject(req, kMaxBody));
  for (const auto& field : body) {
    if (std::find(known.begin(), known.end(), field.key()) == known.end())
      return MakeError(ErrorCode::BadRequest, "unknown field '" + std::string(field.key()) + "'");
  }
  return body;
}

Result<std::string> UserField(const json::object& body) {
  HANGAR_ASSIGN_OR_RETURN(std::string user, StringField(body, "user"));
  if (user.empty()) return MakeError(ErrorCode::BadRequest, "'user' names the user");
  return user;
}

Result<http::Response> List(GateService& gates, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  auto status = db::ParseAccessStatus(req.Param("status"));
  if (!status) {
    return MakeError(ErrorCode::NotFound,
                     "a list of access requests is pending, accepted or rejected");
  }
  HANGAR_ASSIGN_OR_RETURN(int limit, LimitQuery(req, 100, 1000));
  HANGAR_ASSIGN_OR_RETURN(
      auto page, gates.List(req.principal, repo, *status, req.Query("cursor").value_or(""), limit));
  json::array out;
  for (const auto& r : page.items) out.push_back(RequestJson(r));
  http::Response res = JsonResponse(out);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

Result<http::Response> Handle(GateService& gates, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadBody(req, {"user", "status", "rejectionReason"}));
  HANGAR_ASSIGN_OR_RETURN(std::string user, UserField(body));
  HANGAR_ASSIGN_OR_RETURN(std::string status_name, StringField(body, "status"));
  auto status = db::ParseAccessStatus(status_name);
  if (!status) {
    return MakeError(ErrorCode::BadRequest,
                     "'status' is \"pending\", \"accepted\" or \"rejected\"");
  }
  HANGAR_ASSIGN_OR_RETURN(std::string reason, StringField(body, "rejectionReason"));
  HANGAR_TRY(gates.Handle(req.principal, repo, user, *status, reason));
  return JsonResponse(json::object{});
}

Result<http::Response> Grant(GateService& gates, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body, ReadBody(req, {"user"}));
  HANGAR_ASSIGN_OR_RETURN(std::string user, UserField(body));
  HANGAR_TRY(gates.Grant(req.principal, repo, user));
  return JsonResponse(json::object{});
}

}  // namespace

void AddGateRoutes(http::Router& r, GateService& gates) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  auto small = [](http::Request& q) { return CheckDeclaredLength(q, kMaxBody); };
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base =
        "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}/user-access-request";
    const Requirement write = Requirement::Repo(t, Access::Write);
    // Literal routes before the {status} one (first match wins).
    r.Add(Method::Post, base + "/handle", ApiFamily::Hf, write.Also(small),
          [&gates, t](http::Request& q) { return Handle(gates, q, t); });
    r.Add(Method::Post, base + "/grant", ApiFamily::Hf, write.Also(small),
          [&gates, t](http::Request& q) { return Grant(gates, q, t); });
    r.Add(Method::Get, base + "/{status}", ApiFamily::Hf, write,
          [&gates, t](http::Request& q) { return List(gates, q, t); });
  }
}

}  // namespace hangar::api

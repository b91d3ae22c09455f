// Branches and tags over HTTP (hf-api.md §6.5, §6.6): parse, call CommitService, render.

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

// The JSON object body, `{}` when the body is empty (curl -X POST without data).
// Errors: PayloadTooLarge, BadRequest.
Result<json::object> BodyOrEmpty(HfDeps& d, http::Request& req) {
  size_t max = static_cast<size_t>(d.config.limits.max_json_body_bytes);
  HANGAR_ASSIGN_OR_RETURN(auto text, req.ReadBody(max));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    return MakeError(ErrorCode::BadRequest, "the body must be a JSON object");
  }
  return std::move(v.as_object());
}

// A ref short name from the rest of the path: the clients encode '/' as %2F; a raw '/'
// is taken as part of the name too. Decoded once. Errors: BadRequest empty.
Result<std::string> NameParam(const http::Request& req, std::string_view what) {
  std::string name = PercentDecode(req.Param("rest"));
  if (name.empty()) {
    return MakeError(ErrorCode::BadRequest, "missing " + std::string(what) + " name");
  }
  return name;
}

json::object RefJson(std::string_view prefix, std::string_view name, const Oid& target) {
  return json::object{{"name", name},
                      {"ref", std::string(prefix) + std::string(name)},
                      {"targetCommit", target.Hex()}};
}

}  // namespace

Result<http::Response> HandleCreateBranch(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto name, NameParam(req, "branch"));
  HANGAR_ASSIGN_OR_RETURN(auto body, BodyOrEmpty(d, req));
  services::BranchInput in;
  in.name = std::move(name);
  HANGAR_ASSIGN_OR_RETURN(auto start, OptionalString(body, "startingPoint"));
  in.starting_point = std::move(start);
  HANGAR_ASSIGN_OR_RETURN(auto overwrite, BoolField(body, "overwrite"));
  in.overwrite = overwrite;
  HANGAR_ASSIGN_OR_RETURN(auto empty, BoolField(body, "emptyBranch"));
  in.empty = empty;
  HANGAR_ASSIGN_OR_RETURN(auto target, d.commits.CreateBranch(req.principal, id, in));
  return JsonResponse(RefJson("refs/heads/", in.name, target));
}

Result<http::Response> HandleDeleteBranch(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto name, NameParam(req, "branch"));
  HANGAR_TRY(d.commits.DeleteBranch(req.principal, id, name));
  return JsonResponse(json::object{{"success", true}});
}

Result<http::Response> HandleCreateTag(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto split, SplitRevisionAndPath(req.Param("rest")));
  if (!split.path.empty()) return MakeError(ErrorCode::RevisionNotFound, "invalid revision");
  HANGAR_ASSIGN_OR_RETURN(auto body, BodyOrEmpty(d, req));
  HANGAR_ASSIGN_OR_RETURN(auto tag, OptionalString(body, "tag"));
  if (!tag) return MakeError(ErrorCode::BadRequest, "'tag' must be a string");
  HANGAR_ASSIGN_OR_RETURN(auto message, OptionalString(body, "message"));
  // Python sends "message": null or "" for a lightweight tag.
  if (message && message->empty()) message.reset();
  HANGAR_ASSIGN_OR_RETURN(auto target,
                          d.commits.CreateTag(req.principal, id, split.revision, *tag, message));
  return JsonResponse(RefJson("refs/tags/", *tag, target));
}

Result<http::Response> HandleDeleteTag(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto name, NameParam(req, "tag"));
  HANGAR_TRY(d.commits.DeleteTag(req.principal, id, name));
  return JsonResponse(json::object{{"success", true}});
}

}  // namespace hangar::api

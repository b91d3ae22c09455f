#include "api/error_render.h"

#include <boost/json.hpp>

namespace hangar::api {

namespace json = boost::json;

namespace {

// X-Error-Code is sent only for the codes the HF clients classify (hf-api.md §1.10) plus
// a few informative ones; an invalid token must carry none (§1.7).
bool SendsHfErrorCode(ErrorCode c) {
  switch (c) {
    case ErrorCode::RepoNotFound:
    case ErrorCode::RevisionNotFound:
    case ErrorCode::EntryNotFound:
    case ErrorCode::GatedRepo:
    case ErrorCode::BadRequest:
    case ErrorCode::Conflict:
    case ErrorCode::Forbidden:
    case ErrorCode::PreconditionFailed:
    case ErrorCode::Unprocessable:
    case ErrorCode::PayloadTooLarge:
    case ErrorCode::RangeNotSatisfiable:
    case ErrorCode::SizeInvalid:  // uploads (docs/uploads.md)
    case ErrorCode::DigestInvalid:
      return true;
    default:
      return false;
  }
}

// MLflow's error code and HTTP status for `c` (mlflow/exceptions.py's table): clients read
// the code, so a hub-only code becomes the nearest of MLflow's. `status` is the one
// RenderError chose (401 for an anonymous caller of a gated repo).
std::pair<std::string_view, int> MlflowError(ErrorCode c, int status) {
  if (c == ErrorCode::GatedRepo && status == 401) return {"UNAUTHENTICATED", 401};
  switch (c) {
    case ErrorCode::NotFound:
    case ErrorCode::RepoNotFound:
    case ErrorCode::RevisionNotFound:
    case ErrorCode::EntryNotFound:
      return {"RESOURCE_DOES_NOT_EXIST", 404};
    case ErrorCode::Conflict:
      return {"RESOURCE_ALREADY_EXISTS", 400};
    case ErrorCode::MethodNotAllowed:  // an endpoint MLflow does not have
      return {"ENDPOINT_NOT_FOUND", 404};
    case ErrorCode::Unauthorized:
      return {"UNAUTHENTICATED", 401};
    case ErrorCode::Forbidden:
    case ErrorCode::GatedRepo:
      return {"PERMISSION_DENIED", 403};
    case ErrorCode::TooManyRequests:
      return {"REQUEST_LIMIT_EXCEEDED", 429};
    case ErrorCode::Unavailable:
      return {"TEMPORARILY_UNAVAILABLE", 503};
    default:
      break;
  }
  if (status >= 500) return {"INTERNAL_ERROR", 500};
  return {"INVALID_PARAMETER_VALUE", 400};
}

// The OpenAI API's error object, which its clients read (`error.message`, `type`).
std::string OpenAiErrorBody(const Error& e, const ErrorInfo& info) {
  const char* type = e.code == ErrorCode::Unauthorized      ? "authentication_error"
                     : e.code == ErrorCode::Forbidden       ? "permission_error"
                     : e.code == ErrorCode::NotFound        ? "not_found_error"
                     : e.code == ErrorCode::TooManyRequests ? "rate_limit_error"
                     : info.http_status >= 500              ? "api_error"
                                                            : "invalid_request_error";
  return json::serialize(json::object{{"error", json::object{{"message", e.message},
                                                             {"type", type},
                                                             {"param", nullptr},
                                                             {"code", std::string(info.name)}}}});
}

}  // namespace

http::Response RenderError(http::ApiFamily api, const Error& e, const http::Request& req) {
  const ErrorInfo& info = Describe(e.code);
  http::Response res;
  res.status = info.http_status;
  // A gated repo's files: 401 to an anonymous caller (sign in first), 403 to a user who
  // may not read them yet (hf-api.md §1.10; both are the clients' GatedRepoError). git and
  // git-lfs then ask for credentials as for any 401.
  const bool gated_anonymous = e.code == ErrorCode::GatedRepo && req.principal.anonymous;
  if (gated_anonymous) res.status = 401;
  if ((e.code == ErrorCode::Unauthorized || gated_anonymous) && api != http::ApiFamily::Oci) {
    res.SetHeader("WWW-Authenticate", "Basic realm=\"Hangar\"");
  }
  switch (api) {
    case http::ApiFamily::Hf:
    case http::ApiFamily::Plain:
    case http::ApiFamily::Html: {
      if (SendsHfErrorCode(e.code)) res.SetHeader("X-Error-Code", std::string(info.name));
      res.SetHeader("X-Error-Message", http::HeaderSafe(e.message));
      res.body = json::serialize(json::object{{"error", e.message}});
      res.SetHeader("Content-Type", "application/json");
      break;
    }
    case http::ApiFamily::Viewer: {
      // The dataset viewer's form (dataset-viewer.md §3): every error names its code, and
      // an error is never cached, so a retry after ResponseNotReady sees the answer.
      // A credential the hub refuses is the viewer's ExternalUnauthenticatedError (§3.1).
      res.SetHeader("X-Error-Code", e.code == ErrorCode::Unauthorized
                                        ? std::string("ExternalUnauthenticatedError")
                                        : std::string(info.name));
      res.SetHeader("Cache-Control", "no-store");
      res.SetHeader("Access-Control-Expose-Headers", "X-Error-Code, X-Revision");
      res.body = json::serialize(json::object{{"error", e.message}});
      res.SetHeader("Content-Type", "application/json");
      break;
    }
    case http::ApiFamily::Lfs: {
      if (e.code == ErrorCode::Unauthorized || gated_anonymous) {
        res.SetHeader("LFS-Authenticate", "Basic realm=\"Hangar\"");
      }
      if (SendsHfErrorCode(e.code)) res.SetHeader("X-Error-Code", std::string(info.name));
      res.SetHeader("X-Error-Message", http::HeaderSafe(e.message));
      res.body =
          json::serialize(json::object{{"message", e.message}, {"request_id", req.request_id}});
      res.SetHeader("Content-Type", "application/vnd.git-lfs+json");
      break;
    }
    case http::ApiFamily::Oci: {
      std::string code = info.oci_code.empty() ? "UNKNOWN" : std::string(info.oci_code);
      res.body = json::serialize(json::object{
          {"errors", json::array{json::object{{"code", code}, {"message", e.message}}}}});
      res.SetHeader("Content-Type", "application/json");
      break;
    }
    case http::ApiFamily::Mlflow: {
      auto [code, status] = MlflowError(e.code, res.status);
      res.status = status;
      res.body = json::serialize(json::object{{"error_code", code}, {"message", e.message}});
      res.SetHeader("Content-Type", "application/json");
      break;
    }
    case http::ApiFamily::OpenAi:
      res.body = OpenAiErrorBody(e, info);
      res.SetHeader("Content-Type", "application/json");
      break;
    case http::ApiFamily::Git: {
      res.SetHeader("X-Error-Message", http::HeaderSafe(e.message));
      res.body = e.message + "\n";
      res.SetHeader("Content-Type", "text/plain; charset=utf-8");
      break;
    }
  }
  if (e.code == ErrorCode::TooManyRequests || e.code == ErrorCode::Unavailable) {
    if (res.GetHeader("Retry-After").empty()) res.SetHeader("Retry-After", "5");
  }
  return res;
}

}  // namespace hangar::api

#include "api/oci/oci_auth.h"

#include <boost/json.hpp>

namespace hangar::api {

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

OciAuth::OciAuth(http::Authenticator hub, OciAuthOptions options)
    : hub_(std::move(hub)), options_(std::move(options)) {}
OciAuth::~OciAuth() = default;

// Until the token flow lands: hub credentials only, Basic challenges.
Result<Principal> OciAuth::Caller(const http::Request& req, std::string_view,
                                  OciAction) const {
  return hub_(req);
}

http::Response OciAuth::Unauthorized(const http::Request&, std::string_view, OciAction,
                                     std::string_view message) const {
  namespace json = boost::json;
  auto res = http::Response::Json(
      401, json::serialize(json::object{
               {"errors", json::array{json::object{{"code", "UNAUTHORIZED"},
                                                   {"message", std::string(message)}}}}}));
  res.SetHeader("WWW-Authenticate", "Basic realm=\"Hangar\"");
  return res;
}

}  // namespace hangar::api

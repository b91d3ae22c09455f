#include "core/error.h"

namespace hangar {

const ErrorInfo& Describe(ErrorCode code) {
  static const ErrorInfo kInfos[] = {
#define HANGAR_ERROR(name, status, oci) {#name, status, oci},
#include "core/error_codes.def"
#undef HANGAR_ERROR
  };
  return kInfos[static_cast<size_t>(code)];
}

std::optional<ErrorCode> ErrorCodeByName(std::string_view name) {
#define HANGAR_ERROR(n, status, oci) \
  if (name == #n) return ErrorCode::n;
#include "core/error_codes.def"
#undef HANGAR_ERROR
  return std::nullopt;
}

ErrorCode ErrorCodeForStatus(int status) {
  switch (status) {
    case 401:
      return ErrorCode::Unauthorized;
    case 403:
      return ErrorCode::Forbidden;
    case 404:
      return ErrorCode::NotFound;
    case 409:
      return ErrorCode::Conflict;
    case 412:
      return ErrorCode::PreconditionFailed;
    case 413:
      return ErrorCode::PayloadTooLarge;
    case 416:
      return ErrorCode::RangeNotSatisfiable;
    case 429:
      return ErrorCode::TooManyRequests;
    case 503:
      return ErrorCode::Unavailable;
    default:
      return status >= 500 ? ErrorCode::Internal : ErrorCode::BadRequest;
  }
}

}  // namespace hangar

#pragma once
// The error catalog (error_codes.def) and the Error value services return.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hangar {

enum class ErrorCode : uint16_t {
#define HANGAR_ERROR(name, status, oci) name,
#include "core/error_codes.def"
#undef HANGAR_ERROR
};

// One row of error_codes.def.
struct ErrorInfo {
  std::string_view name;      // wire name, e.g. "RepoNotFound" (HF X-Error-Code)
  int http_status;            // e.g. 404
  std::string_view oci_code;  // e.g. "NAME_UNKNOWN", or "" when the OCI API has none
};

// The catalog row for `code`. Never fails.
const ErrorInfo& Describe(ErrorCode code);

// The code whose wire name is `name` ("RepoNotFound"), or nullopt. Never fails.
std::optional<ErrorCode> ErrorCodeByName(std::string_view name);

// The code a client gives an HTTP error status whose answer names no code of its own: the
// generic one of that status (401 Unauthorized, 404 NotFound, 429 TooManyRequests, ...),
// else Internal for 5xx and BadRequest for the rest. Never fails.
ErrorCode ErrorCodeForStatus(int status);

// A catalog code and a client-facing message naming the problem:
// "revision 'v9' not found in acme/bert".
struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;
};

// Shorthand constructor: MakeError(ErrorCode::BadRequest, "path contains '..'").
inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace hangar

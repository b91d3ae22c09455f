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

}  // namespace hangar

#include "cli/cli_util.h"

#include <cstdio>

namespace hangar::cli {

int Fail(const Error& e) {
  std::fprintf(stderr, "hangar: %s\n", e.message.c_str());
  return Describe(e.code).http_status >= 500 ? 1 : 2;
}

}  // namespace hangar::cli

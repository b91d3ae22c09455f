// LFS batch API answers a mirror's remote sends (src/services/mirror/lfs_remote.h,
// docs/mirrors.md): ParseLfsBatchResponse over arbitrary bytes. A refusal is BadRequest
// with a message; an accepted answer gives objects whose every action is an http(s) URL
// and whose headers carry no line break (they go into requests as they are).

#include "fuzz_check.h"
#include "services/mirror/lfs_remote.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto objects = services::ParseLfsBatchResponse(fuzz::AsText(data, size));
  if (!objects) {
    FUZZ_CHECK(objects.error().code == ErrorCode::BadRequest && !objects.error().message.empty());
    return 0;
  }
  for (const auto& o : *objects) {
    FUZZ_CHECK(o.oid.Hex().size() == 64);
    for (const auto* action : {&o.download, &o.upload, &o.verify}) {
      if (!*action) continue;
      const auto& href = (*action)->href;
      FUZZ_CHECK(href.rfind("http://", 0) == 0 || href.rfind("https://", 0) == 0);
      for (const auto& [name, value] : (*action)->headers) {
        FUZZ_CHECK((name + value).find_first_of(std::string("\r\n\0", 3)) == std::string::npos);
      }
    }
  }
  return 0;
}

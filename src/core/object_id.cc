#include "core/object_id.h"

#include <climits>
#include <cstdio>

namespace hangar {

std::string ObjectId(int64_t id, char kind) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%023llx", kind, static_cast<unsigned long long>(id));
  return buf;
}

std::optional<int64_t> ParseObjectId(std::string_view text, char kind) {
  if (text.size() != 24 || text[0] != kind) return std::nullopt;
  int64_t id = 0;
  for (char c : text.substr(1)) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    // 23 hex digits hold more than an int64: ids this hub made have the high ones zero.
    if (v < 0 || id > (INT64_MAX >> 4)) return std::nullopt;
    id = id * 16 + v;
  }
  return id;
}

}  // namespace hangar

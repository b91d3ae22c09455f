#include "core/byte_source.h"

#include <algorithm>
#include <cstring>

namespace hangar {

Result<size_t> StringSource::Read(std::span<char> buf) {
  size_t n = std::min(buf.size(), data_.size() - pos_);
  std::memcpy(buf.data(), data_.data() + pos_, n);
  pos_ += n;
  return n;
}

Result<std::string> ReadAll(ByteSource& src, size_t max_bytes) {
  std::string out;
  char buf[16384];
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto n, src.Read(buf));
    if (n == 0) return out;
    if (out.size() + n > max_bytes)
      return MakeError(ErrorCode::PayloadTooLarge,
                       "request body is larger than " + std::to_string(max_bytes) + " bytes");
    out.append(buf, n);
  }
}

}  // namespace hangar

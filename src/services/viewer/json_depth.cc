// The nesting guard of JSON sources (json_depth.h).

#include "services/viewer/json_depth.h"

#include <zlib.h>

#include <vector>

namespace hangar::services::viewer {

Result<void> CheckJsonDepth(const std::string& path, const std::string& name, int max_depth) {
  if (path.ends_with(".zst") || path.ends_with(".zstd"))
    return MakeError(ErrorCode::Unprocessable,
                     "FileFormatNotSupportedError: " + name +
                         ": JSON compressed with zstd is not read yet; compress it with gzip");
  gzFile in = gzopen(path.c_str(), "rb");
  if (!in) return MakeError(ErrorCode::Internal, "cannot read " + path);
  gzbuffer(in, 1 << 18);
  std::vector<char> buf(1 << 20);
  int depth = 0;
  bool in_string = false, escaped = false;
  while (true) {
    int n = gzread(in, buf.data(), static_cast<unsigned>(buf.size()));
    if (n <= 0) break;  // end, or a damaged stream: DuckDB reports that one
    for (int i = 0; i < n; ++i) {
      char c = buf[i];
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth) {
          gzclose(in);
          return MakeError(ErrorCode::Unprocessable, "DatasetGenerationError: " + name +
                                                         " nests JSON deeper than " +
                                                         std::to_string(max_depth) + " levels");
        }
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
  }
  gzclose(in);
  return {};
}

}  // namespace hangar::services::viewer

#pragma once
// A guard before DuckDB reads a JSON source (issue 15): DuckDB 1.4's type detection of
// read_json recurses once per nesting level, so a small file of 100,000 nested lists
// overflows the stack and kills the process (found by an adversarial run). Hangar reads
// each JSON source first and refuses one nested deeper than a bound.

#include <cstddef>
#include <string>

#include "core/result.h"

namespace hangar::services::viewer {

// JSON nesting (arrays and objects) a source may reach; real data rarely passes 20.
inline constexpr int kMaxJsonDepth = 64;

// Reads the file at `path` (plain, or gzip: zlib reads both) and checks that no JSON value
// in it nests deeper than `max_depth`, counting brackets outside strings. The file need not
// be valid JSON (DuckDB judges that). Errors: Unprocessable "DatasetGenerationError: …"
// naming `name` when too deep; FileFormatNotSupportedError for a zstd file (no zstd reader
// here yet); Internal when the file cannot be read.
Result<void> CheckJsonDepth(const std::string& path, const std::string& name,
                            int max_depth = kMaxJsonDepth);

}  // namespace hangar::services::viewer

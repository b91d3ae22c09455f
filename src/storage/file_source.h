#pragma once
// Files as ByteSources: a window of a local file (core/file_source.h does the reading).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "core/file_source.h"
#include "core/result.h"
#include "storage/byte_range.h"

namespace hangar::storage {

using hangar::FileSource;

// Opens `path` and returns a FileSource over the window `range` of it (see ResolveRange).
// Errors: NotFound when `path` does not exist, RangeNotSatisfiable, Internal for other
// I/O failures (message names the path: for logs, not for clients).
Result<std::unique_ptr<FileSource>> OpenFileRange(const std::filesystem::path& path,
                                                  const ByteRange& range);

}  // namespace hangar::storage

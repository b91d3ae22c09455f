#pragma once
// Content-Encoding: gzip request bodies (git sends large fetch negotiations gzipped,
// git-lfs.md §4.1), decoded as a stream.

#include <memory>

#include "core/byte_source.h"

namespace hangar::http {

// A ByteSource yielding the inflated bytes of the gzip stream read from `compressed`.
// Read errors: BadRequest for corrupt or truncated gzip data; `max_output` (0 = no limit)
// bounds the decoded size (PayloadTooLarge), against decompression bombs.
std::unique_ptr<ByteSource> GunzipSource(std::shared_ptr<ByteSource> compressed,
                                         uint64_t max_output = 0);

}  // namespace hangar::http

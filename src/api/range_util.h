#pragma once
// The bridge from HTTP's Range and If-Range (http/range.h, http/preconditions.h) to the
// byte window a blob store reads (storage/byte_range.h), for the handlers that stream
// stored objects (LFS downloads, OCI blobs).

#include <cstdint>
#include <string_view>

#include "core/result.h"
#include "http/range.h"
#include "http/request.h"
#include "storage/byte_range.h"

namespace hangar::api {

// The window of an object of `size` bytes whose ETag is `etag` that `req` asks for: the
// whole object (`partial` false) without a Range that applies (none, or If-Range names
// another tag), else the range (`partial` true). Errors: RangeNotSatisfiable, its message
// naming the range and the size.
Result<storage::ByteRange> ChosenRange(const http::Request& req, std::string_view etag,
                                       uint64_t size, http::RangePolicy policy, bool& partial);

}  // namespace hangar::api

#pragma once
// Conditional requests (RFC 9110 §13) against a representation's entity tag, for every API
// family: If-Match, If-None-Match and If-Range. Hangar's representations have strong
// ETags (git blob ids, LFS oids, OCI digests) and no modification dates, so If-Modified-Since
// and If-Unmodified-Since are ignored, as §13.1.3 and §13.1.4 direct for a server that has
// no such date.

#include <optional>
#include <string_view>

#include "http/request.h"

namespace hangar::http {

// The answer the preconditions of `req` give for a representation whose ETag is `etag`
// (quoted, e.g. "\"abc\""), evaluated in §13.2.2's order: 412 when If-Match names none
// of it (strong comparison; "*" matches), 304 for GET/HEAD and 412 otherwise when
// If-None-Match names it (weak comparison; "*" matches), else nullopt: serve as usual.
std::optional<int> EvaluatePreconditions(const Request& req, std::string_view etag);

// Whether a Range header applies (§13.1.5): true without If-Range, or when If-Range is an
// entity tag strongly equal to `etag`; false when it is another tag or a date (no date
// of ours can match one), so the whole representation is sent.
bool RangeApplies(const Request& req, std::string_view etag);

}  // namespace hangar::http

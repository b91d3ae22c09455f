#pragma once
// SigV4 query-string presigning (AWS "Authenticating Requests: Using Query Parameters"),
// which libcurl cannot do: URLs a client uses without credentials (S3BlobStore's
// RedirectUrl and PartUrl). Only the host header is signed; the payload is unsigned.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_client.h"

namespace hangar::storage {

// AWS's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex), and
// '/' kept when `keep_slash` (object key paths).
std::string AwsUriEncode(std::string_view s, bool keep_slash);

// "a=1&b=2" from `query` (unencoded names and values), sorted by name and AWS-encoded:
// the canonical query string, usable as is in a URL.
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> query);

// A presigned URL for `method` on `origin` ("https://host[:port]") + `path` (already
// AWS-encoded, starting with '/') with `query` (unencoded), valid for `ttl` from
// `now_unix` (unix seconds; at most 7 days by AWS's rules, clamped).
std::string PresignUrl(std::string_view method, std::string_view origin, std::string_view path,
                       std::vector<std::pair<std::string, std::string>> query,
                       const net::AwsSigV4& creds, std::chrono::seconds ttl, int64_t now_unix);

}  // namespace hangar::storage

#pragma once
// Where an outgoing connection would go, and whether it may: the host of a URL, the
// addresses it resolves to, and which of those are on the public internet. For requests
// a client names (web imports), so that the server cannot be made to reach its own
// loopback, the private networks it sits in, or a cloud metadata address (SSRF).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::net {

// The host and port of `url`, one of http://, https://, git:// or ssh://.
struct UrlHost {
  std::string scheme;  // lower-case
  std::string host;    // a DNS name (lower-case) or a numeric address, without brackets
  uint16_t port = 0;   // the URL's, or the scheme's default (80, 443, 9418, 22)
};

// Parses `url` (libcurl's URL parser, RFC 3986). Errors: BadRequest when it has no host,
// an unknown scheme, or a host with characters outside letters, digits, '.', '-', ':'
// (IPv6), or whose host read plainly from the text differs from the parser's — so a host
// is safe to hand to other programs, and they connect to the host checked.
Result<UrlHost> ParseUrlHost(std::string_view url);

// `url` with its host replaced by numeric address `ip` (IPv6 bracketed), so that a program
// given it connects where `ip` says without resolving the name again. Errors: BadRequest.
Result<std::string> WithHost(std::string_view url, std::string_view ip);

// Every address `host` resolves to (getaddrinfo; a numeric host is its own), numeric, in
// the resolver's order, without duplicates. Errors: BadRequest when it does not resolve.
Result<std::vector<std::string>> ResolveHost(const std::string& host);

// Whether numeric address `ip` is on the public internet: false for loopback, unspecified,
// private (RFC 1918, RFC 4193), shared (RFC 6598), link-local (cloud metadata included),
// multicast, reserved and documentation ranges, and IPv4 such addresses mapped or
// translated into IPv6; false for anything that does not parse.
bool IsPublicAddress(std::string_view ip);

}  // namespace hangar::net

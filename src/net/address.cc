#include "net/address.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <memory>

#include "core/util.h"

namespace hangar::net {

namespace {

Error Bad(std::string what) { return MakeError(ErrorCode::BadRequest, std::move(what)); }

// One part of a parsed URL, or "" when it has none.
std::string UrlPart(CURLU* u, CURLUPart part) {
  char* out = nullptr;
  if (curl_url_get(u, part, &out, 0) != CURLUE_OK || !out) return "";
  std::string s(out);
  curl_free(out);
  return s;
}

// Whether the first `bits` bits of `a` and `p` agree.
bool InPrefix(const uint8_t* a, const uint8_t* p, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {  // a byte at a time
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (p[i] & mask)) return false;
  }
  return true;
}

// A network: its first bytes (the rest zero) and prefix length.
struct Net {
  std::array<uint8_t, 16> prefix;
  int bits;
};

bool In(const uint8_t* a, const Net& n) { return InPrefix(a, n.prefix.data(), n.bits); }

bool IsPublicV4(const uint8_t* a) {
  // IANA's special-purpose IPv4 registry: none of these is an ordinary internet host.
  static const Net kNotPublic[] = {
      {{0}, 8},
      {{10}, 8},
      {{100, 64}, 10},
      {{127}, 8},
      {{169, 254}, 16},
      {{172, 16}, 12},
      {{192, 0, 0}, 24},
      {{192, 0, 2}, 24},
      {{192, 88, 99}, 24},
      {{192, 168}, 16},
      {{198, 18}, 15},
      {{198, 51, 100}, 24},
      {{203, 0, 113}, 24},
      {{224}, 4},
      {{240}, 4},
  };
  return std::none_of(std::begin(kNotPublic), std::end(kNotPublic),
                      [a](const Net& n) { return In(a, n); });
}

bool IsPublicV6(const uint8_t* a) {
  // IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96): judged by the IPv4 inside.
  if (In(a, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96}) ||
      In(a, {{0, 0x64, 0xff, 0x9b}, 96})) {
    return IsPublicV4(a + 12);
  }
  if (In(a, {{0x20, 0x02}, 16})) return IsPublicV4(a + 2);  // 6to4: the IPv4 inside
  static const Net kNotPublic[] = {
      {{}, 96},                        // ::, ::1 and IPv4-compatible (deprecated)
      {{0x01}, 64},                    // discard-only
      {{0x20, 0x01, 0x0d, 0xb8}, 32},  // documentation
      {{0xfc}, 7},                     // unique local
      {{0xfe, 0x80}, 10},              // link-local
      {{0xfe, 0xc0}, 10},              // site-local (deprecated)
      {{0xff}, 8},                     // multicast
  };
  return std::none_of(std::begin(kNotPublic), std::end(kNotPublic),
                      [a](const Net& n) { return In(a, n); });
}

bool SafeHostChars(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':';
  });
}

// The host of `url` read from its text alone: between "://" and the first '/', '?' or '#',
// after the last '@', without a port or IPv6 brackets, lower-cased.
std::string HostAsWritten(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  std::string_view auth = url.substr(start + 3);
  auth = auth.substr(0, auth.find_first_of("/?#"));
  if (size_t at = auth.rfind('@'); at != std::string_view::npos) auth.remove_prefix(at + 1);
  if (auth.starts_with('[')) {
    size_t close = auth.find(']');
    return close == std::string_view::npos ? "" : AsciiLower(auth.substr(1, close - 1));
  }
  return AsciiLower(auth.substr(0, auth.rfind(':')));
}

}  // namespace

Result<UrlHost> ParseUrlHost(std::string_view url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (!u) return MakeError(ErrorCode::Internal, "out of memory");
  std::string text(url);
  if (curl_url_set(u.get(), CURLUPART_URL, text.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
    return Bad("not a valid URL");
  }
  UrlHost out;
  out.scheme = AsciiLower(UrlPart(u.get(), CURLUPART_SCHEME));
  static const std::array<std::pair<std::string_view, uint16_t>, 4> kDefaults{
      {{"http", 80}, {"https", 443}, {"git", 9418}, {"ssh", 22}}};
  auto scheme = std::find_if(kDefaults.begin(), kDefaults.end(),
                             [&](const auto& d) { return d.first == out.scheme; });
  if (scheme == kDefaults.end()) return Bad("'" + out.scheme + "://' URLs are not supported");
  out.host = AsciiLower(UrlPart(u.get(), CURLUPART_HOST));
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (!SafeHostChars(out.host)) return Bad("the URL's host is empty or not a plain host name");
  // Programs that parse the URL again (git for git:// and ssh://) must see the same host.
  if (HostAsWritten(url) != out.host) return Bad("the URL's host is ambiguous");
  std::string port = UrlPart(u.get(), CURLUPART_PORT);
  out.port = scheme->second;
  if (!port.empty()) {
    auto n = ParseUint64(port);
    if (!n || *n == 0 || *n > 65535) return Bad("the URL's port is not valid");
    out.port = static_cast<uint16_t>(*n);
  }
  return out;
}

Result<std::string> WithHost(std::string_view url, std::string_view ip) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), curl_url_cleanup);
  if (!u) return MakeError(ErrorCode::Internal, "out of memory");
  std::string text(url);
  std::string host =
      ip.find(':') == std::string_view::npos ? std::string(ip) : "[" + std::string(ip) + "]";
  if (curl_url_set(u.get(), CURLUPART_URL, text.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
      curl_url_set(u.get(), CURLUPART_HOST, host.c_str(), 0) != CURLUE_OK) {
    return Bad("not a valid URL");
  }
  std::string out = UrlPart(u.get(), CURLUPART_URL);
  if (out.empty()) return Bad("not a valid URL");
  return out;
}

Result<std::vector<std::string>> ResolveHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    return Bad("cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  std::vector<std::string> out;
  for (const addrinfo* ai = found; ai; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* addr = nullptr;
    if (ai->ai_family == AF_INET) {
      addr = &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr;
    } else if (ai->ai_family == AF_INET6) {
      addr = &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (!inet_ntop(ai->ai_family, addr, text, sizeof text)) continue;
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  if (out.empty()) return Bad("host '" + host + "' has no IP address");
  return out;
}

bool IsPublicAddress(std::string_view ip) {
  std::string text(ip);
  uint8_t bytes[16];
  if (inet_pton(AF_INET, text.c_str(), bytes) == 1) return IsPublicV4(bytes);
  if (inet_pton(AF_INET6, text.c_str(), bytes) == 1) return IsPublicV6(bytes);
  return false;
}

}  // namespace hangar::net

// The pure pieces of the OCI client declared in oci_client.h: references, auth
// challenges, Docker config credentials, the retry policy and error mapping. No I/O.

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <regex>

#include <boost/json.hpp>

#include "client/oci_client.h"
#include "core/hex.h"
#include "core/util.h"

namespace hangar::client {

namespace json = boost::json;

namespace {

bool IsTokenChar(char c) {  // RFC 7230 tchar
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

void SkipSpaces(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

std::string ReadToken(std::string_view s, size_t& i) {
  size_t start = i;
  while (i < s.size() && IsTokenChar(s[i])) ++i;
  return std::string(s.substr(start, i - start));
}

// A quoted-string at s[i] == '"'; false when it is not closed.
bool ReadQuoted(std::string_view s, size_t& i, std::string& out) {
  ++i;
  while (i < s.size()) {
    char c = s[i++];
    if (c == '"') return true;
    if (c == '\\' && i < s.size()) c = s[i++];
    out.push_back(c);
  }
  return false;
}

// Strips a scheme and a path: "https://host:5000/v1/" → "host:5000".
std::string ConfigKeyHost(std::string_view key) {
  if (size_t p = key.find("://"); p != std::string_view::npos) key.remove_prefix(p + 3);
  if (size_t p = key.find('/'); p != std::string_view::npos) key = key.substr(0, p);
  return AsciiLower(key);
}

std::optional<std::string> Base64Decode(std::string_view in) {
  std::string s;
  for (char c : in) {
    if (c != '\n' && c != '\r' && c != ' ') s.push_back(c);
  }
  while (s.size() % 4 != 0) s.push_back('=');  // some writers drop the padding
  std::string out(s.size() / 4 * 3, '\0');
  int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  for (size_t k = s.size(); k > 0 && s[k - 1] == '=' && pad < 2; --k) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace

// ---- names and references ----

bool IsValidOciRepository(std::string_view name) {
  static const std::regex re(
      "[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*)*");
  return !name.empty() && name.size() <= 255 && std::regex_match(name.begin(), name.end(), re);
}

bool IsValidOciTag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128) return false;
  auto ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  if (!ok(tag[0])) return false;
  return std::all_of(tag.begin() + 1, tag.end(),
                     [&](char c) { return ok(c) || c == '.' || c == '-'; });
}

bool IsValidOciDigest(std::string_view digest) {
  if (digest.starts_with("sha256:")) return IsLowerHex(digest.substr(7), 64);
  if (digest.starts_with("sha512:")) return IsLowerHex(digest.substr(7), 128);
  return false;
}

Result<OciRef> OciRef::Parse(std::string_view ref) {
  auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::BadRequest, "reference '" + std::string(ref) + "' " + why +
                                                " (expected host[:port]/name[:tag|@digest])");
  };
  size_t slash = ref.find('/');
  if (slash == std::string_view::npos || slash == 0) return bad("has no registry host");
  OciRef r;
  r.registry = std::string(ref.substr(0, slash));
  static const std::regex host_re(
      "([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*"
      "|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?");
  if (!std::regex_match(r.registry, host_re)) return bad("has an invalid registry host");
  std::string_view rest = ref.substr(slash + 1);
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    r.digest = std::string(rest.substr(at + 1));
    if (!IsValidOciDigest(r.digest)) return bad("has an invalid digest '" + r.digest + "'");
    rest = rest.substr(0, at);
  }
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && rest.find('/', colon) == std::string_view::npos) {
    r.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (!IsValidOciTag(r.tag)) return bad("has an invalid tag '" + r.tag + "'");
  } else if (r.digest.empty()) {
    r.tag = "latest";
  }
  r.repository = std::string(rest);
  if (!IsValidOciRepository(r.repository)) {
    return bad("has an invalid repository name '" + r.repository +
               "' (lower-case letters, digits and . _ - separators, '/' between components)");
  }
  return r;
}

bool IsLoopbackRegistry(std::string_view registry) {
  std::string host;
  if (registry.starts_with("[")) {
    size_t close = registry.find(']');
    host = std::string(
        registry.substr(1, close == std::string_view::npos ? registry.npos : close - 1));
  } else {
    host = std::string(registry.substr(0, registry.find(':')));
  }
  host = AsciiLower(host);
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  static const std::regex v4("127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}");
  return std::regex_match(host, v4);
}

std::string OciScope(std::string_view repository, bool push) {
  return "repository:" + std::string(repository) + (push ? ":pull,push" : ":pull");
}

// ---- WWW-Authenticate ----

std::vector<AuthChallenge> ParseChallenges(std::string_view s) {
  std::vector<AuthChallenge> out;
  size_t i = 0;
  for (;;) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
    std::string scheme = ReadToken(s, i);
    if (scheme.empty()) return out;
    AuthChallenge ch;
    ch.scheme = AsciiLower(scheme);
    for (;;) {
      SkipSpaces(s, i);
      size_t save = i;
      std::string name = ReadToken(s, i);
      SkipSpaces(s, i);
      if (name.empty() || i >= s.size() || s[i] != '=') {
        i = save;  // the next challenge's scheme (or the end)
        break;
      }
      ++i;
      SkipSpaces(s, i);
      std::string value;
      if (i < s.size() && s[i] == '"') {
        if (!ReadQuoted(s, i, value)) {
          out.push_back(std::move(ch));
          return out;
        }
      } else {
        value = ReadToken(s, i);
      }
      ch.params[AsciiLower(name)] = std::move(value);
      SkipSpaces(s, i);
      if (i < s.size() && s[i] == ',') ++i;
    }
    out.push_back(std::move(ch));
    if (i >= s.size()) return out;
    if (!IsTokenChar(s[i]) && s[i] != ',' && s[i] != ' ') return out;  // garbage
  }
}

// ---- Docker config ----

Result<std::optional<Credentials>> DockerConfigCredentials(std::string_view config_json,
                                                           std::string_view registry) {
  boost::system::error_code ec;
  json::value v = json::parse(config_json, ec);
  if (ec || !v.is_object()) {
    return MakeError(ErrorCode::BadRequest, "the Docker config file is not a JSON object");
  }
  const auto* auths = v.as_object().if_contains("auths");
  if (auths == nullptr || !auths->is_object()) return std::optional<Credentials>();
  std::string want = AsciiLower(registry);
  if (want == "docker.io" || want == "registry-1.docker.io") want = "index.docker.io";
  for (const auto& [key, entry] : auths->as_object()) {
    if (ConfigKeyHost(key) != want || !entry.is_object()) continue;
    const auto& o = entry.as_object();
    Credentials c;
    if (const auto* a = o.if_contains("auth");
        a != nullptr && a->is_string() && !a->as_string().empty()) {
      auto decoded = Base64Decode(a->as_string());
      size_t colon = decoded ? decoded->find(':') : std::string::npos;
      if (colon == std::string::npos) {
        return MakeError(ErrorCode::BadRequest,
                         "the Docker config entry for '" + std::string(key) +
                             "' has an auth that is not base64 of user:password");
      }
      c.username = decoded->substr(0, colon);
      c.password = decoded->substr(colon + 1);
      return std::optional<Credentials>(std::move(c));
    }
    const auto* u = o.if_contains("username");
    const auto* p = o.if_contains("password");
    if (u != nullptr && u->is_string() && p != nullptr && p->is_string()) {
      c.username = std::string(u->as_string());
      c.password = std::string(p->as_string());
      return std::optional<Credentials>(std::move(c));
    }
  }
  return std::optional<Credentials>();
}

// ---- retries ----

bool RetryPolicy::RetryableStatus(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

std::chrono::milliseconds RetryPolicy::Delay(
    int failed, std::optional<std::chrono::seconds> retry_after) const {
  if (retry_after) {
    return std::min<std::chrono::milliseconds>(*retry_after, max_retry_after);
  }
  auto d = base;
  for (int k = 1; k < failed && d < max_delay; ++k) d *= 2;
  return std::min(d, max_delay);
}

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value, int64_t now_unix) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return std::chrono::seconds(999999999);
    return std::chrono::seconds(std::stoll(std::string(value)));
  }
  std::tm tm{};
  std::string s(value);
  const char* end = ::strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  int64_t at = ::timegm(&tm);
  return std::chrono::seconds(std::max<int64_t>(0, at - now_unix));
}

// ---- errors ----

Error OciHttpError(const net::HttpResponse& res, std::string_view what) {
  std::string oci_code, message;
  boost::system::error_code ec;
  json::value v = json::parse(res.body, ec);
  if (!ec && v.is_object()) {
    const auto* errors = v.as_object().if_contains("errors");
    if (errors != nullptr && errors->is_array() && !errors->as_array().empty() &&
        errors->as_array()[0].is_object()) {
      const auto& e = errors->as_array()[0].as_object();
      if (const auto* c = e.if_contains("code"); c != nullptr && c->is_string())
        oci_code = c->as_string();
      if (const auto* m = e.if_contains("message"); m != nullptr && m->is_string())
        message = m->as_string();
    }
  } else if (!res.body.empty() && res.body.size() < 300 &&
             res.body.find('<') == std::string::npos) {
    message = res.body;
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
  }
  static const std::map<std::string, ErrorCode, std::less<>> by_code = {
      {"BLOB_UNKNOWN", ErrorCode::BlobUnknown},
      {"BLOB_UPLOAD_INVALID", ErrorCode::BlobUploadInvalid},
      {"BLOB_UPLOAD_UNKNOWN", ErrorCode::BlobUploadUnknown},
      {"DIGEST_INVALID", ErrorCode::DigestInvalid},
      {"MANIFEST_BLOB_UNKNOWN", ErrorCode::ManifestBlobUnknown},
      {"MANIFEST_INVALID", ErrorCode::ManifestInvalid},
      {"MANIFEST_UNKNOWN", ErrorCode::ManifestUnknown},
      {"NAME_INVALID", ErrorCode::NameInvalid},
      {"NAME_UNKNOWN", ErrorCode::RepoNotFound},
      {"SIZE_INVALID", ErrorCode::SizeInvalid},
      {"TAG_INVALID", ErrorCode::TagInvalid},
      {"UNAUTHORIZED", ErrorCode::Unauthorized},
      {"DENIED", ErrorCode::Forbidden},
      {"UNSUPPORTED", ErrorCode::MethodNotAllowed},
      {"TOOMANYREQUESTS", ErrorCode::TooManyRequests},
      {"UNAVAILABLE", ErrorCode::Unavailable},
  };
  ErrorCode code;
  if (auto it = by_code.find(oci_code); it != by_code.end()) {
    code = it->second;
  } else {
    code = ErrorCodeForStatus(res.status);
  }
  std::string text = std::string(what) + ": HTTP " + std::to_string(res.status);
  if (!oci_code.empty()) text += " " + oci_code;
  if (!message.empty()) text += ": " + message;
  return MakeError(code, std::move(text));
}

}  // namespace hangar::client

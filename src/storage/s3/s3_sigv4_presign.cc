#include "storage/s3/s3_sigv4_presign.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <time.h>

#include <algorithm>
#include <array>

#include "core/hex.h"
#include "core/sha256.h"

namespace hangar::storage {
namespace {

using Mac = std::array<uint8_t, 32>;

Mac Hmac(std::span<const uint8_t> key, std::string_view data) {
  Mac out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

Mac Hmac(std::string_view key, std::string_view data) {
  return Hmac(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size()),
              data);
}

std::string Format(int64_t seconds, const char* fmt) {
  time_t t = static_cast<time_t>(seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

}  // namespace

std::string AwsUriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> query) {
  for (auto& [k, v] : query) {
    k = AwsUriEncode(k, false);
    v = AwsUriEncode(v, false);
  }
  std::sort(query.begin(), query.end());
  std::string out;
  for (const auto& [k, v] : query) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

std::string PresignUrl(std::string_view method, std::string_view origin, std::string_view path,
                       std::vector<std::pair<std::string, std::string>> query,
                       const net::AwsSigV4& creds, std::chrono::seconds ttl, int64_t now_unix) {
  std::string_view host = origin.substr(origin.find("://") + 3);
  const std::string amz_date = Format(now_unix, "%Y%m%dT%H%M%SZ");
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + creds.region + "/" + creds.service + "/aws4_request";
  int64_t expires = std::clamp<int64_t>(ttl.count(), 1, 7 * 24 * 3600);
  query.emplace_back("X-Amz-Algorithm", "AWS4-HMAC-SHA256");
  query.emplace_back("X-Amz-Credential", creds.access_key + "/" + scope);
  query.emplace_back("X-Amz-Date", amz_date);
  query.emplace_back("X-Amz-Expires", std::to_string(expires));
  query.emplace_back("X-Amz-SignedHeaders", "host");
  const std::string canonical_query = CanonicalQuery(std::move(query));

  const std::string canonical_request = std::string(method) + "\n" + std::string(path) + "\n" +
                                        canonical_query + "\nhost:" + std::string(host) +
                                        "\n\nhost\nUNSIGNED-PAYLOAD";
  const std::string string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256::Of(canonical_request).Hex();
  Mac key = Hmac("AWS4" + creds.secret_key, date);
  key = Hmac(key, creds.region);
  key = Hmac(key, creds.service);
  key = Hmac(key, "aws4_request");
  const Mac signature = Hmac(key, string_to_sign);
  return std::string(origin) + std::string(path) + "?" + canonical_query +
         "&X-Amz-Signature=" + HexEncode(signature);
}

}  // namespace hangar::storage

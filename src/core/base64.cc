#include "core/base64.h"

#include <openssl/evp.h>

#include <cstdint>

namespace hangar {
namespace {

bool IsStdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// Decodes standard-alphabet `text` without its padding through OpenSSL, after a strict
// alphabet check (EVP_DecodeBlock itself skips blanks). nullopt on any other byte or an
// impossible length.
std::optional<std::string> DecodeStd(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  for (char c : text) {
    if (!IsStdChar(c)) return std::nullopt;
  }
  size_t pad = (4 - text.size() % 4) % 4;
  std::string padded;
  if (pad > 0) {
    padded.reserve(text.size() + pad);
    padded.append(text).append(pad, '=');
    text = padded;
  }
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0 || static_cast<size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - pad);  // EVP_DecodeBlock counts the padding as zero bytes
  return out;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // + the NUL OpenSSL writes
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  // At most two '=': "QQ===" is not base64.
  for (int i = 0; i < 2 && text.ends_with('='); ++i) text.remove_suffix(1);
  return DecodeStd(text);
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string std_text(text);
  for (char& c : std_text) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (c == '+' || c == '/') {
      return std::nullopt;  // the standard alphabet's, not the URL one's
    }
  }
  return DecodeStd(std_text);
}

}  // namespace hangar

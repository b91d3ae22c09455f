#include "http/response.h"

#include <strings.h>

#include "core/util.h"

namespace hangar::http {

static bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

void Response::SetHeader(std::string_view name, std::string value) {
  for (auto& [k, v] : headers) {
    if (SameName(k, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::move(value));
}

void Response::AddHeader(std::string_view name, std::string value) {
  headers.emplace_back(std::string(name), std::move(value));
}

std::string_view Response::GetHeader(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (SameName(k, name)) return v;
  }
  return {};
}

Response Response::Json(int status, std::string json, std::string_view content_type) {
  return Text(status, std::move(json), content_type);  // the same, with another default type
}

Response Response::Text(int status, std::string text, std::string_view content_type) {
  Response r;
  r.status = status;
  r.body = std::move(text);
  r.SetHeader("Content-Type", std::string(content_type));
  return r;
}

Response Response::Stream(int status, std::unique_ptr<ByteSource> src,
                          std::string_view content_type) {
  Response r;
  r.status = status;
  r.content_length = src->Size();
  r.stream = std::move(src);
  r.SetHeader("Content-Type", std::string(content_type));
  return r;
}

std::string ContentDisposition(std::string_view filename, bool attachment) {
  std::string ascii;
  for (unsigned char c : filename) {
    ascii += (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') ? '_' : static_cast<char>(c);
  }
  return std::string(attachment ? "attachment" : "inline") + "; filename*=UTF-8''" +
         PercentEncode(filename) + "; filename=\"" + ascii + "\";";
}

std::string HeaderSafe(std::string s) {
  for (auto& c : s) {
    if (c == '\r' || c == '\n' || static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

}  // namespace hangar::http

#include "storage/s3/s3_xml.h"

#include "core/util.h"

#include <cstdlib>

namespace hangar::storage::s3xml {

std::vector<std::string_view> Elements(std::string_view xml, std::string_view name) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(name);
  const std::string close = "</" + std::string(name) + ">";
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    size_t after = pos + open.size();
    if (after >= xml.size()) break;
    char c = xml[after];
    if (c != '>' && c != ' ' && c != '/') {  // <KeyCount> is not <Key>
      pos = after;
      continue;
    }
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <Name/>
      out.emplace_back();
      pos = gt + 1;
      continue;
    }
    size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, end - gt - 1));
    pos = end + close.size();
  }
  return out;
}

std::optional<std::string> Text(std::string_view xml, std::string_view name) {
  auto all = Elements(xml, name);
  if (all.empty()) return std::nullopt;
  return Unescape(all.front());
}

std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out.push_back('&');
    else if (ent == "lt")
      out.push_back('<');
    else if (ent == "gt")
      out.push_back('>');
    else if (ent == "quot")
      out.push_back('"');
    else if (ent == "apos")
      out.push_back('\'');
    else if (ent.size() > 1 && ent[0] == '#') {
      std::string num(ent.substr(1));
      long cp = num[0] == 'x' ? std::strtol(num.c_str() + 1, nullptr, 16)
                              : std::strtol(num.c_str(), nullptr, 10);
      // UTF-8 encode the code point.
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.append(s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

std::string Escape(std::string_view s) {
  std::string out;
  AppendEscapedMarkup(out, s);
  return out;
}

}  // namespace hangar::storage::s3xml

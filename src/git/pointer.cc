#include "git/pointer.h"

#include <limits>

namespace hangar::git {
namespace {

constexpr std::string_view kVersionLine = "version https://git-lfs.github.com/spec/v1";
constexpr std::string_view kLegacyVersionLines[] = {
    "version https://hawser.github.com/spec/v1",
    "version http://git-media.io/v/2",
};

// Takes the next LF-terminated line (without the LF) off the front of `text`.
std::optional<std::string_view> NextLine(std::string_view& text) {
  size_t lf = text.find('\n');
  if (lf == text.npos) return std::nullopt;
  std::string_view line = text.substr(0, lf);
  text.remove_prefix(lf + 1);
  return line;
}

std::optional<uint64_t> ParseSize(std::string_view s) {
  if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');  // 19 digits cannot overflow uint64
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return v;
}

}  // namespace

std::optional<Pointer> ParsePointer(std::string_view text) {
  if (text.size() >= kMaxPointerSize) return std::nullopt;
  auto version = NextLine(text);
  if (!version) return std::nullopt;
  bool known = *version == kVersionLine;
  for (std::string_view legacy : kLegacyVersionLines) known = known || *version == legacy;
  if (!known) return std::nullopt;

  auto oid_line = NextLine(text);
  constexpr std::string_view kOid = "oid sha256:";
  if (!oid_line || oid_line->substr(0, kOid.size()) != kOid) return std::nullopt;
  auto oid = Sha256::ParseHex(oid_line->substr(kOid.size()));  // 64 lower-case hex only
  if (!oid) return std::nullopt;

  auto size_line = NextLine(text);
  constexpr std::string_view kSize = "size ";
  if (!size_line || size_line->substr(0, kSize.size()) != kSize) return std::nullopt;
  auto size = ParseSize(size_line->substr(kSize.size()));
  if (!size || !text.empty()) return std::nullopt;
  return Pointer{*oid, *size};
}

std::string FormatPointer(const Pointer& pointer) {
  std::string out;
  out.reserve(134);
  out.append(kVersionLine).append("\noid sha256:").append(pointer.oid.Hex());
  out.append("\nsize ").append(std::to_string(pointer.size)).push_back('\n');
  return out;
}

}  // namespace hangar::git

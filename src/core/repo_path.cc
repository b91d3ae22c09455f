#include "core/repo_path.h"

#include <algorithm>
#include <string>

namespace hangar {

namespace {

// Bytes of the UTF-8 code point at the start of `s` when HFS+ ignores it in names
// (U+200C–U+200F, U+202A–U+202E, U+206A–U+206F, U+FEFF), else 0. macOS opens
// ".g\u200cit" as ".git".
size_t HfsIgnorableBytes(std::string_view s) {
  if (s.size() < 3) return 0;
  auto a = static_cast<unsigned char>(s[0]);
  auto b = static_cast<unsigned char>(s[1]);
  auto c = static_cast<unsigned char>(s[2]);
  if (a == 0xE2 && b == 0x80 && ((c >= 0x8C && c <= 0x8F) || (c >= 0xAA && c <= 0xAE))) return 3;
  if (a == 0xE2 && b == 0x81 && c >= 0xAA && c <= 0xAF) return 3;
  if (a == 0xEF && b == 0xBB && c == 0xBF) return 3;
  return 0;
}

// `path` as a message may quote it (and so an X-Error-Message header): control bytes as
// \xNN, at most 200 bytes.
std::string Shown(std::string_view path) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : path.substr(0, 200)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  if (path.size() > 200) out += "...";
  return out;
}

// ValidateRepoPath, with `strict` also refusing backslashes and control characters.
Result<void> CheckPath(std::string_view path, bool strict) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::BadRequest,
                     "invalid path '" + Shown(path) + "': " + std::string(why));
  };
  if (path.empty()) return bad("it is empty");
  if (path.size() > 4096) return bad("longer than 4096 bytes");
  if (path.front() == '/') return bad("absolute paths are not allowed");
  for (unsigned char c : path) {
    if (c == 0) return bad("it contains a NUL byte");
    if (!strict) continue;
    if (c == '\\') return bad("it contains a backslash");
    if (c < 0x20 || c == 0x7f) return bad("it contains a control character");
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view comp = path.substr(start, end - start);
    if (comp.empty()) return bad("it contains an empty component");
    if (comp == "." || comp == "..") return bad("'.' and '..' components are not allowed");
    if (comp == ".git") return bad("a '.git' component is not allowed");
    if (IsGitDirName(comp)) {
      return bad("a component '" + Shown(comp) +
                 "' is not allowed: some filesystems open it as the .git directory");
    }
    // git's fsck refuses a .gitmodules that is not a file (gitmodulesBlob).
    if (strict && end < path.size() && IsGitmodulesName(comp)) {
      return bad("a folder '" + Shown(comp) + "' is not allowed: git reads it as .gitmodules");
    }
    start = end + 1;
  }
  return {};
}

// `component` as the filesystems that are lenient with names see it: without HFS-ignorable
// code points, ASCII lower-cased, cut at an NTFS stream or '\\', without trailing dots and
// spaces.
std::string LenientName(std::string_view component) {
  std::string name;
  for (size_t i = 0; i < component.size();) {
    if (size_t n = HfsIgnorableBytes(component.substr(i))) {
      i += n;
      continue;
    }
    char c = component[i++];
    name += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  // NTFS: a stream (":$DATA", "::$INDEX_ALLOCATION") or a '\\' separator ends the name,
  // and trailing dots and spaces are dropped.
  name.erase(std::min(name.find_first_of(":\\"), name.size()));
  while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.pop_back();
  return name;
}

// Whether `name` is the 8.3 short name `stem` + "~<n>" (n from 1, no leading zero).
bool IsShortName(std::string_view name, std::string_view stem) {
  if (name.size() <= stem.size() + 1 || !name.starts_with(stem) || name[stem.size()] != '~' ||
      name[stem.size() + 1] == '0') {
    return false;
  }
  return std::all_of(name.begin() + stem.size() + 1, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool IsGitDirName(std::string_view component) {
  std::string name = LenientName(component);
  // ".git" is usually GIT~1; later ones take higher numbers.
  return name == ".git" || IsShortName(name, "git");
}

bool IsGitmodulesName(std::string_view component) {
  std::string name = LenientName(component);
  // NTFS shortens ".gitmodules" to GITMOD~<n>, or to a hashed "GI7EBA~<n>" (git's
  // is_ntfs_dotgitmodules checks both).
  return name == ".gitmodules" || IsShortName(name, "gitmod") || IsShortName(name, "gi7eba");
}

Result<void> ValidateRepoPath(std::string_view path) { return CheckPath(path, true); }

Result<void> ValidateReadPath(std::string_view path) { return CheckPath(path, false); }

}  // namespace hangar

// Glob matching (glob.h). Braces are expanded first; then pattern and path are matched
// component by component, `**` by trying every split point, and each component by a
// backtracking matcher over `*`, `?` and classes (linear in the component for one `*`,
// bounded by the component lengths otherwise: repo path components are at most 255 bytes).

#include "services/viewer/glob.h"

#include <string>
#include <vector>

namespace hangar::services::viewer {
namespace {

constexpr size_t kMaxAlternatives = 256;

// Index of the '}' closing the '{' at `open`, or npos.
size_t ClosingBrace(std::string_view p, size_t open) {
  int depth = 0;
  for (size_t i = open; i < p.size(); ++i) {
    if (p[i] == '{') ++depth;
    if (p[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Appends every brace expansion of `p` to `out`; false past kMaxAlternatives.
bool Expand(std::string_view p, std::vector<std::string>& out) {
  size_t open = p.find('{');
  size_t close = open == std::string_view::npos ? open : ClosingBrace(p, open);
  if (close == std::string_view::npos) {
    out.emplace_back(p);
    return out.size() <= kMaxAlternatives;
  }
  std::string_view head = p.substr(0, open), tail = p.substr(close + 1);
  std::string_view body = p.substr(open + 1, close - open - 1);
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= body.size(); ++i) {
    if (i < body.size() && body[i] == '{') ++depth;
    if (i < body.size() && body[i] == '}') --depth;
    if (i == body.size() || (body[i] == ',' && depth == 0)) {
      std::string alt =
          std::string(head) + std::string(body.substr(start, i - start)) + std::string(tail);
      if (!Expand(alt, out)) return false;
      start = i + 1;
    }
  }
  return true;
}

// Whether `c` is in the class starting after '[' at p[i]; sets `end` past its ']'. False
// with end = npos when the class is not closed.
bool InClass(std::string_view p, size_t i, char c, size_t& end) {
  bool negate = i < p.size() && (p[i] == '!' || p[i] == '^');
  if (negate) ++i;
  bool found = false;
  size_t first = i;
  for (; i < p.size() && (p[i] != ']' || i == first); ++i) {
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      found |= p[i] <= c && c <= p[i + 2];
      i += 2;
    } else {
      found |= p[i] == c;
    }
  }
  if (i >= p.size()) {
    end = std::string_view::npos;
    return false;
  }
  end = i + 1;
  return found != negate;
}

// One component against one pattern component (no '/').
bool MatchComponent(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0;
  size_t star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size()) {
      if (p[pi] == '?') {
        ++pi, ++si;
        continue;
      }
      if (p[pi] == '[') {
        size_t end = 0;
        bool in = InClass(p, pi + 1, s[si], end);
        if (end != std::string_view::npos) {
          if (in) {
            pi = end, ++si;
            continue;
          }
        } else if (s[si] == '[') {  // unclosed: a literal '['
          ++pi, ++si;
          continue;
        }
      } else if (p[pi] == s[si]) {
        ++pi, ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;  // let the last '*' take one more character
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::vector<std::string_view> Components(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '/') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Dynamic programming over (pattern component, path component) so that patterns with many
// `**` stay polynomial: ok[i][j] says whether p[i..] matches s[j..].
bool MatchParts(const std::vector<std::string_view>& p, const std::vector<std::string_view>& s) {
  std::vector<std::vector<char>> ok(p.size() + 1, std::vector<char>(s.size() + 1, 0));
  ok[p.size()][s.size()] = 1;
  for (size_t i = p.size(); i-- > 0;) {
    for (size_t j = s.size() + 1; j-- > 0;) {
      if (p[i] == "**")
        ok[i][j] = ok[i + 1][j] || (j < s.size() && ok[i][j + 1]);
      else
        ok[i][j] = j < s.size() && ok[i + 1][j + 1] && MatchComponent(p[i], s[j]);
    }
  }
  return ok[0][0];
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view path) {
  std::vector<std::string> alternatives;
  if (!Expand(pattern, alternatives)) return false;
  auto parts = Components(path);
  for (const auto& alt : alternatives)
    if (MatchParts(Components(alt), parts)) return true;
  return false;
}

}  // namespace hangar::services::viewer

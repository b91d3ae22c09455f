#include "core/util.h"

#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "core/hex.h"

namespace hangar {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t NowUnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Iso8601(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.000Z", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string Iso8601Millis(int64_t unix_millis) {
  int64_t ms = unix_millis % 1000;
  if (ms < 0) ms += 1000;
  std::string out = Iso8601((unix_millis - ms) / 1000);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(ms));
  return out.replace(out.size() - 5, 4, frac);  // ".000Z" → ".mmmZ"
}

static void FillRandom(uint8_t* p, size_t n) {
  if (RAND_bytes(p, static_cast<int>(n)) != 1) std::abort();  // no entropy: cannot go on
}

std::string RandomAlnum(size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  out.reserve(n);
  uint8_t buf[64];
  while (out.size() < n) {
    FillRandom(buf, sizeof buf);
    for (uint8_t b : buf) {
      if (b >= 248) continue;  // 248 = 62 * 4: keep the distribution uniform
      out.push_back(kAlphabet[b % 62]);
      if (out.size() == n) break;
    }
  }
  return out;
}

std::string RandomHex(size_t n) {
  std::vector<uint8_t> buf(n);
  FillRandom(buf.data(), n);
  return HexEncode(buf);
}

static int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s, bool* ok) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexVal(s[i + 1]), lo = HexVal(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi << 4 | lo));
        i += 2;
        continue;
      }
    }
    if (s[i] == '%' && ok) *ok = false;
    out.push_back(s[i]);
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string PercentEncode(std::string_view s, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
  return out;
}

void AppendEscapedMarkup(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\0':
        break;
      default:
        out += c;
    }
  }
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view NextLine(std::string_view text, size_t& pos) {
  size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  return line;
}

std::optional<uint64_t> ParseUint64(std::string_view s) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseRowId(std::string_view s) {
  auto v = ParseUint64(s);
  if (!v || *v == 0 || *v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::string KeysetCursor(int64_t a, int64_t b) {
  return std::to_string(a) + "_" + std::to_string(b);
}

std::optional<std::pair<int64_t, int64_t>> ParseKeysetCursor(std::string_view s) {
  const size_t sep = s.find('_');
  if (sep == std::string_view::npos) return std::nullopt;
  auto a = ParseUint64(s.substr(0, sep));
  auto b = ParseUint64(s.substr(sep + 1));
  constexpr auto kMax = static_cast<uint64_t>(INT64_MAX);
  if (!a || !b || *a > kMax || *b > kMax) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(*a), static_cast<int64_t>(*b));
}

bool LooksBinary(std::string_view text) {
  constexpr size_t kSniffBytes = 8000;
  return text.substr(0, kSniffBytes).find('\0') != std::string_view::npos;
}

namespace {

// The length of the well-formed UTF-8 sequence at p (1–4), or 0 when the bytes there are
// not one (RFC 3629 §4: the second byte's range is where overlong forms, surrogates and
// values past U+10FFFF show).
size_t Utf8SequenceAt(const unsigned char* p, const unsigned char* end) {
  unsigned char c = *p;
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;  // a continuation byte first, C0, C1 or F5..FF
  }
  if (static_cast<size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::optional<std::string_view> ShownTextProblem(std::string_view text, bool multiline) {
  if (!IsUtf8(text)) return "is not valid UTF-8";
  for (unsigned char c : text) {
    if (multiline && (c == '\n' || c == '\r' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  }
  return std::nullopt;
}

size_t CodePoints(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string FirstCodePoints(std::string_view s, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((s[i] & 0xC0) != 0x80 && seen++ == n) return std::string(s.substr(0, i));
  }
  return std::string(s);
}

namespace {

// Whether code point `c` may not stand in a title: C1 controls, line and paragraph
// separators, and the bidirectional overrides that make a title read as another.
bool RefusedInTitle(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069);
}

// Whether code point `c` shows nothing (spaces and zero-width characters).
bool Invisible(char32_t c) {
  return c == ' ' || c == 0xa0 || (c >= 0x2000 && c <= 0x200f) || c == 0x202f || c == 0x205f ||
         c == 0x2060 || c == 0x3000 || c == 0xfeff;
}

// The code points of valid UTF-8 text `s`.
std::vector<char32_t> DecodeUtf8(std::string_view s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    char32_t c = n == 1 ? b : b & (0x7f >> n);
    for (int k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (s[i + k] & 0x3f);
    out.push_back(c);
    i += n;
  }
  return out;
}

}  // namespace

std::optional<std::string> TitleProblem(std::string_view title, size_t max_chars) {
  if (auto problem = ShownTextProblem(title)) return std::string(*problem);
  auto points = DecodeUtf8(title);
  if (std::all_of(points.begin(), points.end(), Invisible)) return "is empty";
  if (std::any_of(points.begin(), points.end(), RefusedInTitle)) {
    return "holds a line separator or a direction override";
  }
  if (points.size() > max_chars) return "is over " + std::to_string(max_chars) + " characters";
  return std::nullopt;
}

std::string ObjectId(int64_t id, char kind) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%023llx", kind, static_cast<unsigned long long>(id));
  return buf;
}

std::optional<int64_t> ParseObjectId(std::string_view text, char kind) {
  if (text.size() != 24 || text[0] != kind) return std::nullopt;
  int64_t id = 0;
  for (char c : text.substr(1)) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    // 23 hex digits hold more than an int64: ids this hub made have the high ones zero.
    if (v < 0 || id > (INT64_MAX >> 4)) return std::nullopt;
    id = id * 16 + v;
  }
  return id;
}

std::string ShownText(std::string_view text) {
  std::string out = ValidUtf8(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

bool IsUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    size_t n = Utf8SequenceAt(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

std::string ValidUtf8(std::string_view s) {
  if (IsUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    size_t n = Utf8SequenceAt(p, end);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for the one byte
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    }
  }
  return out;
}

}  // namespace hangar

#pragma once
// Small shared helpers: time formatting, randomness.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace hangar {

// Seconds since the Unix epoch, now.
int64_t NowUnix();
// Milliseconds since the Unix epoch, now.
int64_t NowUnixMillis();
// "2024-02-19T10:57:45.000Z" (hf-api.md §1.12): UTC with milliseconds and a Z suffix.
std::string Iso8601(int64_t unix_seconds);
// As Iso8601, to the millisecond: "2026-12-03T18:30:10.277Z".
std::string Iso8601Millis(int64_t unix_millis);

// `n` characters of [A-Za-z0-9] from a cryptographic RNG (OpenSSL RAND_bytes).
std::string RandomAlnum(size_t n);
// `n` random bytes as 2n lower-case hex characters.
std::string RandomHex(size_t n);

// Percent-decodes `s` once; '+' is kept as is. nullopt-free: an invalid escape is kept
// verbatim, and `ok` (when given) is set to false.
std::string PercentDecode(std::string_view s, bool* ok = nullptr);
// Percent-encodes everything but unreserved characters (RFC 3986) and, when
// `keep_slash`, '/'.
std::string PercentEncode(std::string_view s, bool keep_slash = false);
// `s` with ASCII letters lower-cased; other bytes (UTF-8 included) unchanged.
std::string AsciiLower(std::string_view s);
// `s` without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110
// §5.6.3).
std::string_view TrimBlanks(std::string_view s);
// The line of `text` that starts at `pos`, without its '\n'; moves `pos` past it. Loop with
// `while (pos < text.size())`. A '\r' before the '\n' stays in the line.
std::string_view NextLine(std::string_view text, size_t& pos);
// `s` as a decimal uint64: ASCII digits only (no sign, no blanks), leading zeros allowed;
// nullopt for anything else, the empty string, or a value over 2^64 − 1.
std::optional<uint64_t> ParseUint64(std::string_view s);
// `s` as a row id: ParseUint64's digits, from 1 to 2^63 − 1 (a database id, an int64_t);
// nullopt for anything else.
std::optional<int64_t> ParseRowId(std::string_view s);
// A keyset cursor naming where a page ended: "<a>_<b>", two integers from 0 to 2^63 − 1
// (the last row's time and id, say).
std::string KeysetCursor(int64_t a, int64_t b);
// The inverse of KeysetCursor; nullopt for anything else (a sign, blanks, a third part).
std::optional<std::pair<int64_t, int64_t>> ParseKeysetCursor(std::string_view s);
// Whether file content `text` is binary: a NUL byte in its first 8,000 bytes, the test
// git applies before it diffs or blames a file.
bool LooksBinary(std::string_view text);
// Whether `s` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates (U+D800 to
// U+DFFF), nothing past U+10FFFF, no sequence cut short. NUL bytes are valid UTF-8.
bool IsUtf8(std::string_view s);
// What is wrong with `text` as text shown to others (on pages, in git's error lines on a
// terminal): "is not valid UTF-8", or "holds a control character" (line feeds, carriage
// returns and tabs pass when `multiline`); nullopt when nothing is.
std::optional<std::string_view> ShownTextProblem(std::string_view text, bool multiline = false);
// The number of code points of UTF-8 text `s` (its bytes that do not continue a sequence).
size_t CodePoints(std::string_view s);
// The first `n` code points of UTF-8 text `s`: a cut that never splits a character.
std::string FirstCodePoints(std::string_view s, size_t n);
// What is wrong with `title` (already trimmed) as a one-line title of 1 to `max_chars`
// characters (code points) shown to others: ShownTextProblem's findings, "is empty" (only
// spaces and zero-width characters), "holds a line separator or a direction override" (C1
// controls, U+2028/U+2029, the bidirectional overrides and isolates that make a title read
// as another), "is over <max_chars> characters"; nullopt when nothing is. The one rule of
// discussions' and collections' titles.
std::optional<std::string> TitleProblem(std::string_view title, size_t max_chars);
// `text` made fit to show as one line (ShownTextProblem finds nothing): malformed UTF-8 as
// ValidUtf8 makes it, control characters as spaces. For text the hub did not take from a
// form but found (a commit's author and subject).
std::string ShownText(std::string_view text);
// `s` with each byte that does not begin a well-formed UTF-8 sequence replaced by U+FFFD:
// text that must be valid UTF-8 (JSON log lines) from bytes a client sent.
std::string ValidUtf8(std::string_view s);

// An opaque id for `_id`-style fields (hf-api.md §1.12): 24 lower-case hex characters,
// `kind` (a hex digit naming what the id is of) then row id `id` in 23 hex digits.
std::string ObjectId(int64_t id, char kind);
// The id ObjectId(id, kind) made, back; none for any other text (another kind, upper case,
// a length other than 24, a value over 2^63 - 1).
std::optional<int64_t> ParseObjectId(std::string_view text, char kind);

// Appends `s` to `out` with & < > " ' written as character references (&amp; &lt; &gt;
// &quot; &#39;) and NUL dropped: safe as HTML or XML text and attribute values.
void AppendEscapedMarkup(std::string& out, std::string_view s);

}  // namespace hangar

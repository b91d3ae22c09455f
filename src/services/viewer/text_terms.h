#pragma once
// How /search cuts text into terms (dataset-viewer.md §4.5), the same for the rows a search
// index holds and for the query looked up in it: case folded and accents stripped (utf8proc),
// split on every character that is not a letter or a digit (so words of any script are
// terms, where the public viewer keeps a-z only), each word stemmed by a Snowball stemmer
// (libstemmer; Porter's English by default, as the public viewer's DuckDB index uses).
// No stop words: BM25 weighs a word found in most rows next to nothing anyway.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hangar::services::viewer {

// Words longer than this many bytes (after folding) are not terms: long tokens (hashes,
// base64) would only grow the index.
constexpr size_t kMaxTermBytes = 64;

// One stemmer and its buffers. Not thread-safe: one per thread.
class TermCutter {
 public:
  // `language`: a Snowball stemmer's name or ISO 639 code ("english", "fr", "deu"); "" or a
  // language the library does not know: "porter".
  explicit TermCutter(std::string_view language = "");
  ~TermCutter();
  TermCutter(const TermCutter&) = delete;
  TermCutter& operator=(const TermCutter&) = delete;

  // The stemmer in use ("porter", or the language given).
  const std::string& language() const { return language_; }

  // Appends the terms of `text` (UTF-8; invalid sequences are separators) to `out`, in
  // order, repeats kept. Returns how many it appended.
  size_t Cut(std::string_view text, std::vector<std::string>& out);

 private:
  void AddWord(std::string_view word, std::vector<std::string>& out);

  struct Stemmer;
  std::unique_ptr<Stemmer> stemmer_;
  std::string language_;
  std::string folded_;  // reused between calls
};

}  // namespace hangar::services::viewer

// TermCutter (text_terms.h).

#include "services/viewer/text_terms.h"

#include <libstemmer.h>
#include <utf8proc.h>

#include <cstdlib>

namespace hangar::services::viewer {

struct TermCutter::Stemmer {
  sb_stemmer* stemmer = nullptr;
  ~Stemmer() {
    if (stemmer) sb_stemmer_delete(stemmer);
  }
};

namespace {

bool AsciiWordChar(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsWordCategory(utf8proc_int32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace

TermCutter::TermCutter(std::string_view language) : stemmer_(std::make_unique<Stemmer>()) {
  if (!language.empty()) {
    language_ = std::string(language);
    stemmer_->stemmer = sb_stemmer_new(language_.c_str(), "UTF_8");
  }
  if (!stemmer_->stemmer) {
    language_ = "porter";
    stemmer_->stemmer = sb_stemmer_new("porter", "UTF_8");
  }
  if (!stemmer_->stemmer) std::abort();  // out of memory: libstemmer ships "porter"
}

TermCutter::~TermCutter() = default;

void TermCutter::AddWord(std::string_view word, std::vector<std::string>& out) {
  if (word.empty() || word.size() > kMaxTermBytes) return;
  const sb_symbol* stem = sb_stemmer_stem(
      stemmer_->stemmer, reinterpret_cast<const sb_symbol*>(word.data()), int(word.size()));
  if (!stem) {  // out of memory in the stemmer: keep the word as it is
    out.emplace_back(word);
    return;
  }
  out.emplace_back(reinterpret_cast<const char*>(stem),
                   size_t(sb_stemmer_length(stemmer_->stemmer)));
}

size_t TermCutter::Cut(std::string_view text, std::vector<std::string>& out) {
  size_t before = out.size();
  bool ascii = true;
  for (unsigned char c : text) ascii = ascii && c < 0x80;
  if (ascii) {  // the common case, without utf8proc's allocation
    folded_.assign(text);
    for (char& c : folded_)
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    size_t i = 0;
    while (i < folded_.size()) {
      while (i < folded_.size() && !AsciiWordChar(folded_[i])) ++i;
      size_t start = i;
      while (i < folded_.size() && AsciiWordChar(folded_[i])) ++i;
      AddWord(std::string_view(folded_).substr(start, i - start), out);
    }
    return out.size() - before;
  }
  utf8proc_uint8_t* mapped = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   utf8proc_ssize_t(text.size()), &mapped,
                   utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD |
                                     UTF8PROC_STRIPMARK | UTF8PROC_IGNORE));
  if (n < 0) {
    // Not UTF-8: cut its ASCII letters and digits only.
    std::string ascii_only(text);
    for (char& c : ascii_only)
      if (static_cast<unsigned char>(c) >= 0x80) c = ' ';
    return Cut(ascii_only, out);
  }
  folded_.assign(reinterpret_cast<const char*>(mapped), size_t(n));
  std::free(mapped);
  size_t start = 0, i = 0;
  while (i < folded_.size()) {
    utf8proc_int32_t c = 0;
    utf8proc_ssize_t len =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(folded_.data()) + i,
                         utf8proc_ssize_t(folded_.size() - i), &c);
    if (len <= 0) {  // cannot happen after utf8proc_map; a separator if it does
      len = 1;
      c = -1;
    }
    if (c < 0 || !IsWordCategory(c)) {
      AddWord(std::string_view(folded_).substr(start, i - start), out);
      start = i + size_t(len);
    }
    i += size_t(len);
  }
  AddWord(std::string_view(folded_).substr(start), out);
  return out.size() - before;
}

}  // namespace hangar::services::viewer

// Repo ids and repo paths (src/core/repo_id.h), taken from URLs and commit bodies:
// RepoId::Parse on "<ns>/<name>", ValidateRepoPath and ValidateReadPath on the bytes,
// the percent coding URLs carry them in, and the keyset cursors of list pages in their
// query strings (ParseKeysetCursor). What is accepted must keep the rules the validators
// promise.

#include "core/repo_id.h"
#include "core/repo_path.h"
#include "core/util.h"
#include "fuzz_check.h"

using namespace hangar;

namespace {

// Whether `path` has a component `bad` (components split at '/').
bool HasComponent(std::string_view path, std::string_view bad) {
  size_t pos = 0;
  while (true) {
    size_t slash = path.find('/', pos);
    std::string_view part = path.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    if (part == bad) return true;
    if (slash == std::string_view::npos) return false;
    pos = slash + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);

  size_t slash = text.find('/');
  std::string_view ns = text.substr(0, slash);
  std::string_view name = slash == std::string_view::npos ? "" : text.substr(slash + 1);
  if (auto id = RepoId::Parse(RepoType::Dataset, ns, name)) {
    FUZZ_CHECK(id->Id() == text);
    FUZZ_CHECK(id->UrlPath() == "datasets/" + std::string(text));
    FUZZ_CHECK(ns.size() <= 96 && name.size() <= 96);
    FUZZ_CHECK(text.find("..") == std::string_view::npos);
    FUZZ_CHECK(!name.ends_with(".git"));
    FUZZ_CHECK(PercentEncode(id->Id(), /*keep_slash=*/true) == id->Id());
  }
  if (auto t = ParseRepoType(text)) FUZZ_CHECK(ParseRepoType(RepoTypeName(*t)) == t);

  bool strict = ValidateRepoPath(text).has_value();
  bool read = ValidateReadPath(text).has_value();
  if (strict) FUZZ_CHECK(read);
  if (read) {
    FUZZ_CHECK(!text.empty() && text.front() != '/');
    FUZZ_CHECK(text.find('\0') == std::string_view::npos);
    for (std::string_view bad : {"", ".", "..", ".git"}) FUZZ_CHECK(!HasComponent(text, bad));
  }
  if (strict) {
    for (unsigned char c : text) FUZZ_CHECK(c >= 0x20 && c != 0x7f && c != '\\');
  }

  if (auto cursor = ParseKeysetCursor(text)) {
    FUZZ_CHECK(cursor->first >= 0 && cursor->second >= 0);
    FUZZ_CHECK(ParseKeysetCursor(KeysetCursor(cursor->first, cursor->second)) == cursor);
    FUZZ_CHECK(text.find_first_not_of("0123456789_") == std::string_view::npos);
  }

  bool ok = true;
  FUZZ_CHECK(PercentDecode(PercentEncode(text), &ok) == text && ok);
  FUZZ_CHECK(PercentDecode(PercentEncode(text, /*keep_slash=*/true)) == text);
  // A string without '%' decodes to itself.
  if (text.find('%') == std::string_view::npos) FUZZ_CHECK(PercentDecode(text, &ok) == text);
  return 0;
}

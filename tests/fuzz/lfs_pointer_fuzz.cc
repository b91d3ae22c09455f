// LFS pointer files (src/git/pointer.h), read from every small blob a client pushes:
// ParsePointer over arbitrary bytes; a pointer parsed must format and parse back to
// itself, and canonical text must format to exactly the bytes parsed.

#include "fuzz_check.h"
#include "git/pointer.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  auto pointer = git::ParsePointer(text);
  if (!pointer) return 0;
  FUZZ_CHECK(text.size() < git::kMaxPointerSize);
  std::string formatted = git::FormatPointer(*pointer);
  FUZZ_CHECK(formatted.size() < git::kMaxPointerSize);
  auto again = git::ParsePointer(formatted);
  FUZZ_CHECK(again && *again == *pointer);
  if (text.starts_with("version https://git-lfs.github.com/spec/v1\n")) {
    FUZZ_CHECK(formatted == text);
  }
  return 0;
}

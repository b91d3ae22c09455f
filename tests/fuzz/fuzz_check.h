#pragma once
// Shared by the libFuzzer targets of tests/fuzz (docs/fuzzing.md).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// FUZZ_CHECK(cond): an invariant of a fuzz target. A failure prints it and aborts, so
// libFuzzer reports a crash and keeps the input.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

namespace hangar::fuzz {

// The fuzzer's bytes as text (not NUL-terminated; may hold any byte).
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace hangar::fuzz

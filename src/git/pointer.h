#pragma once
// Git LFS pointer files (git-lfs.md §11.7): the small text stored in git in place of a
// large file's content.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/sha256.h"

namespace hangar::git {

// The LFS object a pointer names.
struct Pointer {
  Sha256 oid;         // SHA-256 of the real content
  uint64_t size = 0;  // bytes of the real content

  friend bool operator==(const Pointer&, const Pointer&) = default;
};

// Pointer files are always shorter than this (git-lfs.md §11.7); blobs this size or
// larger need not be read when looking for pointers.
inline constexpr size_t kMaxPointerSize = 1024;

// Parses a pointer file strictly: exactly the lines
//   "version <url>\n" "oid sha256:<64 lower hex>\n" "size <decimal>\n"
// in that order, LF line ends, < 1024 bytes, size without leading zeros and < 2^63.
// <url> is https://git-lfs.github.com/spec/v1 or one of the two legacy URLs readers
// accept. Pointers with extension lines (ext-N-name) or unknown keys are rejected, so
// such files are served as plain files. nullopt when `text` is not a pointer.
std::optional<Pointer> ParsePointer(std::string_view text);

// The canonical pointer text (version https://git-lfs.github.com/spec/v1), ending in LF.
std::string FormatPointer(const Pointer& pointer);

}  // namespace hangar::git

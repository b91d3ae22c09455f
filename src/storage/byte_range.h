#pragma once
// ByteRange: which bytes of a blob or file to read, and its resolution against a size.

#include <cstdint>
#include <optional>

#include "core/result.h"

namespace hangar::storage {

// A half-open byte window [offset, offset + length) of some object.
struct ByteRange {
  uint64_t offset = 0;             // first byte to read
  std::optional<uint64_t> length;  // bytes to read; absent = to the end

  // Bytes from `offset` to the end.
  static ByteRange From(uint64_t offset) { return {offset, std::nullopt}; }
  // `length` bytes from `offset`.
  static ByteRange Window(uint64_t offset, uint64_t length) { return {offset, length}; }
};

// The concrete window of `r` over an object of `size` bytes.
struct ResolvedRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Resolves `r` against an object of `size` bytes. An offset past the end fails with
// RangeNotSatisfiable; an offset equal to the size gives an empty window (so an empty
// object reads as empty); a length reaching past the end is clamped to the end, as HTTP
// clamps a last-byte-pos. HTTP's own 416 rules (bytes=N- with N >= size) are http/'s job.
Result<ResolvedRange> ResolveRange(const ByteRange& r, uint64_t size);

}  // namespace hangar::storage

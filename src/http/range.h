#pragma once
// Range requests (RFC 9110 §14): the one parser of the `Range` header and the
// `Content-Range` it answers with, for every API family (HF /resolve, LFS downloads, OCI
// blobs). Only single byte ranges are served; anything else is either served whole or
// refused, as the family's RangePolicy says.

#include <cstdint>
#include <string>
#include <string_view>

namespace hangar::http {

// What a family does with a range RFC 9110 lets a server ignore or refuse (§14.2).
struct RangePolicy {
  // `bytes=5-3` (last before first): false serves the whole representation (RFC 9110
  // §14.1.1: an invalid range set may be ignored; the HF hub and git-lfs servers do),
  // true answers 416 (the OCI distribution spec's table, oci.md §3.2).
  bool refuse_backwards = false;
};

// The part of a representation a request gets.
struct RangeAnswer {
  enum class Kind {
    Whole,          // no Range, or one ignored (another unit, multi-range, bad syntax)
    Partial,        // 206: `length` (> 0) bytes from `offset`, inside the representation
    Unsatisfiable,  // 416: no byte of the range exists (first >= size, `bytes=-0`)
  };
  Kind kind = Kind::Whole;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Parses `header` (the Range field's value, "" when absent) against a representation of
// `size` bytes: `bytes=a-b`, `bytes=a-` and the suffix `bytes=-n`, with blanks allowed
// around the parts; a last byte past the end is clamped. Multi-range (`bytes=0-1,5-6`),
// other units and bad syntax are Whole. Never fails.
RangeAnswer ParseRange(std::string_view header, uint64_t size, RangePolicy policy = {});

// The Content-Range value of a 206 ("bytes 0-99/1000") or, for a 416, of the
// representation's size ("bytes */1000").
std::string ContentRange(const RangeAnswer& answer, uint64_t size);

}  // namespace hangar::http

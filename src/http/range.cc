#include "http/range.h"

#include <algorithm>
#include <optional>

#include "core/util.h"

namespace hangar::http {

RangeAnswer ParseRange(std::string_view header, uint64_t size, RangePolicy policy) {
  const RangeAnswer whole;
  const RangeAnswer unsatisfiable{RangeAnswer::Kind::Unsatisfiable};
  header = TrimBlanks(header);
  if (!header.starts_with("bytes=")) return whole;
  std::string_view spec = TrimBlanks(header.substr(6));
  size_t dash = spec.find('-');
  if (spec.find(',') != std::string_view::npos || dash == std::string_view::npos) return whole;
  std::string_view a = TrimBlanks(spec.substr(0, dash));
  std::string_view b = TrimBlanks(spec.substr(dash + 1));
  if (a.empty()) {  // suffix: the last n bytes
    std::optional<uint64_t> n = ParseUint64(b);
    if (!n) return whole;
    if (*n == 0 || size == 0) return unsatisfiable;
    uint64_t length = std::min(*n, size);
    return RangeAnswer{RangeAnswer::Kind::Partial, size - length, length};
  }
  std::optional<uint64_t> first = ParseUint64(a);
  if (!first) return whole;
  std::optional<uint64_t> last;
  if (!b.empty()) {
    last = ParseUint64(b);
    if (!last) return whole;
    if (*last < *first) return policy.refuse_backwards ? unsatisfiable : whole;
  }
  if (*first >= size) return unsatisfiable;
  uint64_t end = last ? std::min(*last, size - 1) : size - 1;
  return RangeAnswer{RangeAnswer::Kind::Partial, *first, end - *first + 1};
}

std::string ContentRange(const RangeAnswer& answer, uint64_t size) {
  if (answer.kind != RangeAnswer::Kind::Partial) return "bytes */" + std::to_string(size);
  return "bytes " + std::to_string(answer.offset) + "-" +
         std::to_string(answer.offset + answer.length - 1) + "/" + std::to_string(size);
}

}  // namespace hangar::http

// Structured request headers and query strings: the one Range parser (http::ParseRange)
// under both policies and its Content-Range, the preconditions (If-Match, If-None-Match,
// If-Range), the OCI chunk Content-Range (api::oci::ParseChunkRange), and http::Request's
// query and Content-Length readers. The first 8 input bytes are the object size, the rest
// the header value. Every window given must lie inside the object, and the two policies
// may differ only on a backwards range.

#include <cstring>

#include "api/oci/oci_handlers.h"
#include "core/util.h"
#include "fuzz_check.h"
#include "http/preconditions.h"
#include "http/range.h"
#include "http/request.h"

using namespace hangar;

namespace {

using Kind = http::RangeAnswer::Kind;

// Whether `r` is a non-empty window inside an object of `size` bytes.
bool Inside(const http::RangeAnswer& r, uint64_t size) {
  return r.length > 0 && r.offset < size && r.length <= size - r.offset;
}

void CheckRanges(std::string_view header, uint64_t size) {
  http::RangeAnswer lenient = http::ParseRange(header, size);
  http::RangeAnswer strict = http::ParseRange(header, size, http::RangePolicy{true});
  for (const auto& r : {lenient, strict}) {
    if (r.kind == Kind::Partial) {
      FUZZ_CHECK(Inside(r, size));
      std::string cr = http::ContentRange(r, size);
      FUZZ_CHECK(cr == "bytes " + std::to_string(r.offset) + "-" +
                           std::to_string(r.offset + r.length - 1) + "/" + std::to_string(size));
    }
  }
  // The policies agree but where the lenient one ignores what the strict one refuses.
  if (lenient.kind != strict.kind) {
    FUZZ_CHECK(lenient.kind == Kind::Whole && strict.kind == Kind::Unsatisfiable);
  } else if (lenient.kind == Kind::Partial) {
    FUZZ_CHECK(lenient.offset == strict.offset && lenient.length == strict.length);
  }

  http::Request req;
  req.method = http::Method::Get;
  req.headers = {{"if-none-match", std::string(header)}, {"if-range", std::string(header)}};
  auto st = http::EvaluatePreconditions(req, "\"abc\"");
  FUZZ_CHECK(!st || *st == 304);
  if (http::RangeApplies(req, "\"abc\"")) FUZZ_CHECK(TrimBlanks(header) == "\"abc\"");

  if (auto chunk = api::oci::ParseChunkRange(header)) {
    FUZZ_CHECK(header.find('-') != std::string_view::npos);
    // The chunk's size, last - first + 1, must not wrap to 0.
    if (chunk->last >= chunk->first) FUZZ_CHECK(chunk->last - chunk->first + 1 != 0);
  } else {
    FUZZ_CHECK(chunk.error().code == ErrorCode::BlobUploadInvalid);
  }
}

void CheckQuery(std::string_view text) {
  http::Request req;
  req.query = std::string(text);
  req.headers.emplace_back("content-length", std::string(text));
  for (std::string_view key : {"path", "expand", "cursor", "limit", "recursive", ""}) {
    auto first = req.Query(key);
    auto all = req.QueryAll(key);
    FUZZ_CHECK(first.has_value() == !all.empty());
    if (first) FUZZ_CHECK(*first == all.front());
  }
  if (auto b = http::ParseBool(text)) FUZZ_CHECK(text.size() <= 5);
  if (auto n = req.ContentLength()) FUZZ_CHECK(!text.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t object_size = 0;
  if (size >= sizeof(object_size)) {
    std::memcpy(&object_size, data, sizeof(object_size));
    data += sizeof(object_size);
    size -= sizeof(object_size);
  }
  std::string_view text = fuzz::AsText(data, size);
  CheckRanges(text, object_size);
  CheckRanges(text, object_size % 1024);  // small objects, where clamping matters
  CheckQuery(text);
  return 0;
}

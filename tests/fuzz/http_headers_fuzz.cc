// Structured request headers and query strings: the Range parsers of /resolve
// (api::ParseRange), LFS downloads (api::lfs::ParseRange) and OCI blobs
// (api::oci::BlobRange), the OCI chunk Content-Range (api::oci::ParseChunkRange), and
// http::Request's query and Content-Length readers. The first 8 input bytes are the
// object size, the rest the header value. Every window given must lie inside the
// object, and the three Range parsers must agree where their rules coincide.

#include <cstring>

#include "api/hf/hf_handlers.h"
#include "api/lfs/lfs_handlers.h"
#include "api/oci/oci_handlers.h"
#include "fuzz_check.h"
#include "http/request.h"

using namespace hangar;

namespace {

// Whether `r` is a non-empty window inside an object of `size` bytes.
bool Inside(const storage::ByteRange& r, uint64_t size) {
  return r.length && *r.length > 0 && r.offset < size && *r.length <= size - r.offset;
}

void CheckRanges(std::string_view header, uint64_t size) {
  api::RangeSpec hf;
  api::RangeResult hf_result = api::ParseRange(header, size, hf);
  auto lfs = api::lfs::ParseRange(header, size);
  bool partial = false;
  auto oci = api::oci::BlobRange(header, size, partial);

  if (hf_result == api::RangeResult::Ok) {
    FUZZ_CHECK(hf.length > 0 && hf.offset < size && hf.length <= size - hf.offset);
    // LFS reads the same syntax, with optional blanks: it must find the same window.
    FUZZ_CHECK(lfs && lfs->has_value() && (*lfs)->offset == hf.offset &&
               (*lfs)->length == hf.length);
  }
  if (hf_result == api::RangeResult::Unsatisfiable) {
    FUZZ_CHECK(!lfs && lfs.error().code == ErrorCode::RangeNotSatisfiable);
  }
  if (lfs && lfs->has_value()) {
    FUZZ_CHECK(Inside(**lfs, size));
    // OCI differs only in refusing last < first, which LFS ignores: same window here.
    FUZZ_CHECK(oci && partial && oci->offset == (*lfs)->offset &&
               oci->length == (*lfs)->length);
  }
  if (!lfs) FUZZ_CHECK(lfs.error().code == ErrorCode::RangeNotSatisfiable);
  if (oci && partial) FUZZ_CHECK(Inside(*oci, size));
  if (oci && !partial) FUZZ_CHECK(oci->offset == 0 && !oci->length);
  if (!oci) FUZZ_CHECK(oci.error().code == ErrorCode::RangeNotSatisfiable);

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

#include "api/range_util.h"

#include <string>

#include "http/preconditions.h"

namespace hangar::api {

Result<storage::ByteRange> ChosenRange(const http::Request& req, std::string_view etag,
                                       uint64_t size, http::RangePolicy policy, bool& partial) {
  partial = false;
  std::string_view header = req.Header("range");
  if (header.empty() || !http::RangeApplies(req, etag)) return storage::ByteRange{};
  http::RangeAnswer r = http::ParseRange(header, size, policy);
  switch (r.kind) {
    case http::RangeAnswer::Kind::Whole:
      return storage::ByteRange{};
    case http::RangeAnswer::Kind::Partial:
      partial = true;
      return storage::ByteRange::Window(r.offset, r.length);
    case http::RangeAnswer::Kind::Unsatisfiable:
      break;
  }
  return MakeError(ErrorCode::RangeNotSatisfiable, "range " + std::string(header.substr(0, 100)) +
                                                       " is outside the object (" +
                                                       std::to_string(size) + " bytes)");
}

}  // namespace hangar::api

#include "storage/blob_store.h"

namespace hangar::storage {

Result<void> CheckWritten(uint64_t written, std::optional<uint64_t> expected_size,
                          const Sha256& actual, const Sha256& expected) {
  if (expected_size && written != *expected_size) {
    return MakeError(ErrorCode::SizeInvalid, "received " + std::to_string(written) +
                                                 " bytes, expected " +
                                                 std::to_string(*expected_size));
  }
  if (actual != expected) {
    return MakeError(ErrorCode::DigestInvalid,
                     "content has sha256 " + actual.Hex() + ", expected " + expected.Hex());
  }
  return {};
}

}  // namespace hangar::storage

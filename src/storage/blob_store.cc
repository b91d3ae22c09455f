#include "storage/blob_store.h"

namespace hangar::storage {

namespace {

Error Closed() { return MakeError(ErrorCode::Internal, "blob writer is already closed"); }

}  // namespace

Result<void> VerifyingBlobWriter::Append(std::span<const char> data) {
  if (closed_) return Closed();
  if (expected_size_ && data.size() > *expected_size_ - written_) {
    Abort();
    return MakeError(ErrorCode::SizeInvalid, "blob is larger than the expected " +
                                                 std::to_string(*expected_size_) + " bytes");
  }
  hasher_.Update(std::string_view(data.data(), data.size()));
  written_ += data.size();
  if (auto r = Store(data); !r) {
    Abort();
    return r;
  }
  return {};
}

Result<void> VerifyingBlobWriter::Commit() {
  HANGAR_TRY(CommitAs(expected_));
  return {};
}

Result<Sha256> VerifyingBlobWriter::CommitAs(std::optional<Sha256> expected) {
  if (closed_) return Closed();
  const Sha256 actual = hasher_.Finish();
  const Sha256 id = expected.value_or(actual);
  Result<void> r;
  if (expected_size_ && written_ != *expected_size_) {
    r = MakeError(ErrorCode::SizeInvalid, "received " + std::to_string(written_) +
                                              " bytes, expected " +
                                              std::to_string(*expected_size_));
  } else if (actual != id) {
    r = MakeError(ErrorCode::DigestInvalid,
                  "content has sha256 " + actual.Hex() + ", expected " + id.Hex());
  } else {
    r = Publish(id);
  }
  if (!r) {
    Abort();
    return std::move(r).error();
  }
  closed_ = true;
  return actual;
}

void VerifyingBlobWriter::Abort() {
  if (closed_) return;
  closed_ = true;
  Discard();
}

}  // namespace hangar::storage

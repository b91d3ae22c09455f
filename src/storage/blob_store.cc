#include "storage/blob_store.h"

#include <filesystem>
#include <fstream>

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

Result<Sha256> BlobStore::Adopt(const std::string& path, uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto writer, Create(Sha256{}, size));
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::Internal, "cannot read " + path);
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    HANGAR_TRY(writer->Append(std::span<const char>(buf.data(), n)));
  }
  if (in.bad()) return MakeError(ErrorCode::Internal, "cannot read " + path);
  HANGAR_ASSIGN_OR_RETURN(Sha256 sha, writer->CommitAs(std::nullopt));
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return sha;
}

}  // namespace hangar::storage

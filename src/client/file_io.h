#pragma once
// Files on the client side: an open file (RAII fd), a ByteSource over a window of it for
// streaming a part, and the digests the client checks (LFS sha256, git blob sha1).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "core/byte_source.h"
#include "core/result.h"

namespace hangar::client {

// An open file descriptor, closed on destruction. pread/pwrite on it are thread-safe.
class File {
 public:
  // Errors: NotFound when the path does not exist, Internal otherwise (message has errno).
  static Result<File> Open(const std::filesystem::path& path, int flags, int mode = 0644);
  File() = default;
  File(File&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  File& operator=(File&& o) noexcept;
  ~File();
  int fd() const { return fd_; }
  // The size now. Errors: Internal.
  Result<uint64_t> Size() const;

 private:
  explicit File(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Bytes [offset, offset + length) of an open file, read with pread; each byte read is
// reported to `on_read` (progress). Does not own the fd.
class FileRangeSource final : public ByteSource {
 public:
  FileRangeSource(int fd, uint64_t offset, uint64_t length,
                  std::function<void(size_t)> on_read = nullptr)
      : fd_(fd), pos_(offset), left_(length), on_read_(std::move(on_read)) {}
  Result<size_t> Read(std::span<char> buf) override;
  std::optional<uint64_t> Size() const override { return left_; }
  uint64_t Sent() const { return sent_; }

 private:
  int fd_;
  uint64_t pos_;
  uint64_t left_;
  uint64_t sent_ = 0;
  std::function<void(size_t)> on_read_;
};

// Incremental digest of a file's content in one of the two forms a tree lists: the LFS
// sha256 of the bytes, or the git blob oid, sha1("blob <size>\0" + bytes).
class ContentHasher {
 public:
  enum class Kind { Sha256, GitBlob };
  // `size` is the whole content's size (the git blob header needs it up front).
  ContentHasher(Kind kind, uint64_t size);
  ~ContentHasher();
  ContentHasher(ContentHasher&&) noexcept;
  ContentHasher& operator=(ContentHasher&&) noexcept;
  void Update(const void* data, size_t n);
  // Lower-case hex digest; the hasher is spent afterwards.
  std::string FinishHex();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// Feeds bytes [offset, offset + length) of `fd` to `h`, calling `on_read` per chunk.
// Errors: Internal on a read error or a file shorter than asked.
Result<void> HashRange(int fd, uint64_t offset, uint64_t length, ContentHasher& h,
                       const std::function<void(size_t)>& on_read = nullptr);

// The digest of a whole file of `size` bytes.
Result<std::string> HashFile(const std::filesystem::path& path, ContentHasher::Kind kind,
                             uint64_t size, const std::function<void(size_t)>& on_read = nullptr);

}  // namespace hangar::client

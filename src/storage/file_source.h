#pragma once
// FileSource: a ByteSource over a window of a local file, read with pread(2).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "core/byte_source.h"
#include "core/result.h"
#include "storage/byte_range.h"

namespace hangar::storage {

// Streams `length` bytes of an open file starting at `offset`. Owns the fd and closes it
// in its destructor. Not thread-safe (one reader, as every ByteSource). Reads never move
// the fd's shared offset, so the fd may be a dup of one used elsewhere.
class FileSource final : public ByteSource {
 public:
  // Takes ownership of `fd` (an fd opened for reading).
  FileSource(int fd, uint64_t offset, uint64_t length);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  // Reads up to buf.size() bytes; 0 at the end of the window. Errors: Internal when the
  // read fails or the file turns out shorter than the window (truncated under us).
  Result<size_t> Read(std::span<char> buf) override;
  // Bytes left in the window.
  std::optional<uint64_t> Size() const override { return remaining_; }

  // The rest of the window, for zero-copy senders (sendfile(2)).
  std::optional<FileRegion> Region() const override {
    return FileRegion{fd_, pos_, remaining_};
  }
  // For zero-copy senders (sendfile(2)): the fd and the file offset of the next byte.
  // A sender that uses them sends Size() bytes itself and does not call Read().
  int fd() const { return fd_; }
  uint64_t position() const { return pos_; }

 private:
  int fd_;
  uint64_t pos_;
  uint64_t remaining_;
};

// Opens `path` and returns a FileSource over the window `range` of it (see ResolveRange).
// Errors: NotFound when `path` does not exist, RangeNotSatisfiable, Internal for other
// I/O failures (message names the path: for logs, not for clients).
Result<std::unique_ptr<FileSource>> OpenFileRange(const std::filesystem::path& path,
                                                  const ByteRange& range);

}  // namespace hangar::storage

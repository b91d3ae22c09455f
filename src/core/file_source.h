#pragma once
// FileSource: a ByteSource over a window of an open file, read with pread(2); and a spool
// that copies a stream into an unnamed temporary file to read it back.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/byte_source.h"
#include "core/result.h"

namespace hangar {

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
  std::optional<FileRegion> Region() const override { return FileRegion{fd_, pos_, remaining_}; }
  // For zero-copy senders (sendfile(2)): the fd and the file offset of the next byte.
  // A sender that uses them sends Size() bytes itself and does not call Read().
  int fd() const { return fd_; }
  uint64_t position() const { return pos_; }

 private:
  int fd_;
  uint64_t pos_;
  uint64_t remaining_;
};

// Copies `src` into a new unnamed file in directory `dir` (O_TMPFILE: it vanishes when
// closed, even after a crash) and returns a FileSource over all of it, for a body that
// must be read twice or held without holding memory. Errors: PayloadTooLarge past
// `max_bytes`; those of `src`; Internal when the file cannot be made or written.
Result<std::unique_ptr<FileSource>> SpoolToTempFile(ByteSource& src, const std::string& dir,
                                                    uint64_t max_bytes);

}  // namespace hangar

#pragma once
// ByteSource: a pull stream of bytes (request bodies, blob reads, git output).
// Used by http/ to stream bodies in both directions without holding them in memory.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/result.h"

namespace hangar {

// A window of an open file that a sender may transmit with sendfile(2) instead of Read().
struct FileRegion {
  int fd = -1;          // owned by the source; valid while it lives
  uint64_t offset = 0;  // file offset of the first byte
  uint64_t length = 0;  // bytes
};

// Not thread-safe: one reader at a time. Read() may block; callers run it on the worker
// pool, never on an I/O thread.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to buf.size() bytes into buf; returns 0 only at the end of the stream.
  // Errors: BadRequest when a request body was cut short, Internal for I/O failures.
  virtual Result<size_t> Read(std::span<char> buf) = 0;
  // Bytes still to come, when known up front (becomes a Content-Length).
  virtual std::optional<uint64_t> Size() const { return std::nullopt; }
  // The file window still to come, when this source is one; a sender that uses it sends
  // those bytes itself and does not call Read().
  virtual std::optional<FileRegion> Region() const { return std::nullopt; }
};

// A ByteSource over an owned string.
class StringSource final : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(std::span<char> buf) override;
  std::optional<uint64_t> Size() const override { return data_.size() - pos_; }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// Reads a whole source into a string, failing with PayloadTooLarge past `max_bytes`.
Result<std::string> ReadAll(ByteSource& src, size_t max_bytes);

}  // namespace hangar

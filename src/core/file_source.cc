#include "core/file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace hangar {

FileSource::FileSource(int fd, uint64_t offset, uint64_t length)
    : fd_(fd), pos_(offset), remaining_(length) {}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

Result<size_t> FileSource::Read(std::span<char> buf) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), remaining_));
  if (want == 0) return size_t{0};
  for (;;) {
    ssize_t n = ::pread(fd_, buf.data(), want, static_cast<off_t>(pos_));
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::Internal, std::string("pread: ") + std::strerror(errno));
    }
    if (n == 0) {
      // The window was checked against the size at open; a short file means it was
      // truncated under us. Never report a silent early end to a client.
      return MakeError(ErrorCode::Internal, "file ended " + std::to_string(remaining_) +
                                                " bytes before the expected end");
    }
    pos_ += static_cast<uint64_t>(n);
    remaining_ -= static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
}

namespace {

Error SysError(const std::string& what) {
  return MakeError(ErrorCode::Internal, what + ": " + std::strerror(errno));
}

// An unnamed file in `dir`: O_TMPFILE where the filesystem has it, else a named one
// unlinked at once. Returns -1 with errno set on failure.
int OpenUnnamed(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string name = dir + "/spool-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(name.c_str());
  return fd;
}

}  // namespace

Result<std::unique_ptr<FileSource>> SpoolToTempFile(ByteSource& src, const std::string& dir,
                                                    uint64_t max_bytes) {
  int fd = OpenUnnamed(dir);
  if (fd < 0) return SysError("creating a spool file in " + dir);
  struct Guard {
    int fd;
    ~Guard() {
      if (fd >= 0) ::close(fd);
    }
  } guard{fd};
  std::vector<char> buf(256 * 1024);
  uint64_t total = 0;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, src.Read(buf));
    if (n == 0) break;
    if (total + n > max_bytes) {
      return MakeError(ErrorCode::PayloadTooLarge,
                       "request body is larger than " + std::to_string(max_bytes) + " bytes");
    }
    for (size_t done = 0; done < n;) {
      ssize_t w = ::pwrite(fd, buf.data() + done, n - done, static_cast<off_t>(total + done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return SysError("writing a spool file in " + dir);
      done += static_cast<size_t>(w);
    }
    total += n;
  }
  return std::make_unique<FileSource>(std::exchange(guard.fd, -1), 0, total);
}

}  // namespace hangar

#include "storage/file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace hangar::storage {

Result<ResolvedRange> ResolveRange(const ByteRange& r, uint64_t size) {
  if (r.offset > size) {
    return MakeError(ErrorCode::RangeNotSatisfiable,
                     "range starts at byte " + std::to_string(r.offset) +
                         " but the object has only " + std::to_string(size) + " bytes");
  }
  uint64_t available = size - r.offset;
  return ResolvedRange{r.offset, r.length ? std::min(*r.length, available) : available};
}

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

Result<std::unique_ptr<FileSource>> OpenFileRange(const std::filesystem::path& path,
                                                  const ByteRange& range) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return MakeError(ErrorCode::NotFound, "no such file: " + path.string());
    }
    return MakeError(ErrorCode::Internal, "open " + path.string() + ": " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return MakeError(ErrorCode::Internal, "fstat " + path.string() + ": " + std::strerror(err));
  }
  auto window = ResolveRange(range, static_cast<uint64_t>(st.st_size));
  if (!window) {
    ::close(fd);
    return std::move(window).error();
  }
  // Tell the kernel the window is read front to back, so readahead can grow.
  ::posix_fadvise(fd, static_cast<off_t>(window->offset), static_cast<off_t>(window->length),
                  POSIX_FADV_SEQUENTIAL);
  return std::make_unique<FileSource>(fd, window->offset, window->length);
}

}  // namespace hangar::storage

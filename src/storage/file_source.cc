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

#include "storage/local/local_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace hangar::storage::local_fs {

namespace fs = std::filesystem;

Error IoError(std::string_view what, const fs::path& path, int err) {
  return MakeError(ErrorCode::Internal,
                   std::string(what) + " " + path.string() + ": " + std::strerror(err));
}

Result<void> WriteAll(int fd, const char* p, size_t n, const fs::path& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("write", path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

Result<void> PWriteAll(int fd, const char* p, size_t n, uint64_t offset, const fs::path& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("write", path, errno);
    }
    p += w;
    offset += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
  return {};
}

Result<void> SyncDir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("open", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return IoError("fsync", dir, err);
  return {};
}

namespace {

// mkdir(2) that tolerates an existing directory; `created` says whether this call made it.
Result<void> MakeDir(const fs::path& dir, bool& created) {
  created = false;
  if (::mkdir(dir.c_str(), 0755) == 0) {
    created = true;
    return {};
  }
  if (errno == EEXIST) return {};
  return IoError("mkdir", dir, errno);
}

}  // namespace

Result<void> PublishFile(const fs::path& tmp_path, const fs::path& blobs_dir, const Sha256& id) {
  std::string hex = id.Hex();
  fs::path dir1 = blobs_dir / hex.substr(0, 2);
  fs::path dir2 = dir1 / hex.substr(2, 2);
  fs::path final_path = dir2 / hex;
  bool made1 = false, made2 = false;
  HANGAR_TRY(MakeDir(dir1, made1));
  HANGAR_TRY(MakeDir(dir2, made2));

  struct stat st;
  if (::stat(final_path.c_str(), &st) == 0) {
    // Content-addressed: the existing file holds these very bytes.
    ::unlink(tmp_path.c_str());
    ::utimensat(AT_FDCWD, final_path.c_str(), nullptr, 0);
  } else if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    return IoError("rename to", final_path, errno);
  }
  // Also when the blob existed: its writer may not have synced the directory yet.
  HANGAR_TRY(SyncDir(dir2));
  if (made2) HANGAR_TRY(SyncDir(dir1));
  if (made1) HANGAR_TRY(SyncDir(blobs_dir));
  return {};
}

}  // namespace hangar::storage::local_fs

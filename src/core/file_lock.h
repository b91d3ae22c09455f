#pragma once
// FileLock: an exclusive flock(2) on a file, held for the object's lifetime — one holder
// at a time across processes (on one host, or on a shared volume whose file system
// supports flock); the kernel drops it when its process dies.

#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar {

class FileLock {
 public:
  // Takes the lock of `path` (created, mode 0644, when missing) without waiting.
  // Errors: Conflict "<what> is running" when another holder has it; Internal when the
  // file cannot be opened.
  static Result<FileLock> TryTake(const std::string& path, std::string_view what);
  FileLock(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // releases the lock

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace hangar

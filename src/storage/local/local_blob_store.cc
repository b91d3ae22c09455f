#include "storage/local/local_blob_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

#include "core/util.h"
#include "storage/file_source.h"
#include "storage/local/local_fs.h"

namespace hangar::storage {
namespace {

namespace fs = std::filesystem;

// Appends are coalesced up to this many bytes per write(2); larger appends go straight
// through. Memory per writer stays at this bound whatever the blob size.
constexpr size_t kWriteBufferBytes = 256 * 1024;
// Every this many bytes written, the writer asks the kernel to start writing them to disk
// (sync_file_range, no waiting), so the disk works while the blob still arrives and the
// fsync of Commit() only waits for the tail (a 256 MiB OCI part: ~0.5 s less per part on
// a ~500 MB/s disk).
constexpr uint64_t kWritebackBytes = uint64_t{16} << 20;

using local_fs::IoError;
using local_fs::WriteAll;

Error UnknownBlob(const Sha256& id) {
  return MakeError(ErrorCode::BlobUnknown, "blob sha256:" + id.Hex() + " is unknown");
}

class LocalBlobWriter final : public VerifyingBlobWriter {
 public:
  LocalBlobWriter(int fd, fs::path tmp_path, fs::path blobs_dir, Sha256 expected,
                  std::optional<uint64_t> expected_size)
      : VerifyingBlobWriter(expected, expected_size),
        fd_(fd),
        tmp_path_(std::move(tmp_path)),
        blobs_dir_(std::move(blobs_dir)),
        buffer_(std::make_unique<char[]>(kWriteBufferBytes)) {}

  ~LocalBlobWriter() override { Abort(); }

 private:
  // Coalesces small appends in buffer_; large ones go straight to the file.
  Result<void> Store(std::span<const char> data) override {
    if (buffered_ == 0 && data.size() >= kWriteBufferBytes) return Write(data.data(), data.size());
    if (buffered_ + data.size() <= kWriteBufferBytes) {
      std::memcpy(buffer_.get() + buffered_, data.data(), data.size());
      buffered_ += data.size();
      return {};
    }
    HANGAR_TRY(Flush());
    if (data.size() >= kWriteBufferBytes) return Write(data.data(), data.size());
    std::memcpy(buffer_.get(), data.data(), data.size());
    buffered_ = data.size();
    return {};
  }

  // The durable part of Commit: the buffered tail, fsync, rename into place, fsync the
  // directories.
  Result<void> Publish(const Sha256& id) override {
    HANGAR_TRY(Flush());
    if (::fsync(fd_) != 0) return IoError("fsync", tmp_path_, errno);
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return IoError("close", tmp_path_, errno);
    return local_fs::PublishFile(tmp_path_, blobs_dir_, id);
  }

  void Discard() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_path_.c_str());
  }

  Result<void> Flush() {
    if (buffered_ == 0) return {};
    auto r = Write(buffer_.get(), buffered_);
    buffered_ = 0;
    return r;
  }

  // Writes to the file and starts the disk on every kWritebackBytes written.
  Result<void> Write(const char* p, size_t n) {
    HANGAR_TRY(WriteAll(fd_, p, n, tmp_path_));
    on_file_ += n;
    if (on_file_ - kicked_ >= kWritebackBytes) {
      // Best effort: an error here shows up again at the fsync.
      ::sync_file_range(fd_, static_cast<off_t>(kicked_), static_cast<off_t>(on_file_ - kicked_),
                        SYNC_FILE_RANGE_WRITE);
      kicked_ = on_file_;
    }
    return {};
  }

  int fd_;
  fs::path tmp_path_;
  fs::path blobs_dir_;
  std::unique_ptr<char[]> buffer_;
  size_t buffered_ = 0;
  uint64_t on_file_ = 0;  // bytes written to the file
  uint64_t kicked_ = 0;   // bytes whose writeback sync_file_range started
};

}  // namespace

LocalBlobStore::LocalBlobStore(std::filesystem::path root)
    : root_(std::move(root)),
      blobs_dir_(root_ / "blobs" / "sha256"),
      tmp_dir_(root_ / "tmp"),
      uploads_dir_(tmp_dir_ / "uploads") {
  std::error_code ec;
  fs::create_directories(blobs_dir_, ec);
  fs::create_directories(uploads_dir_, ec);
}

std::filesystem::path LocalBlobStore::BlobPath(const Sha256& id) const {
  std::string hex = id.Hex();
  return blobs_dir_ / hex.substr(0, 2) / hex.substr(2, 2) / hex;
}

Result<uint64_t> LocalBlobStore::Stat(const Sha256& id) {
  fs::path path = BlobPath(id);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return UnknownBlob(id);
    return IoError("stat", path, errno);
  }
  return static_cast<uint64_t>(st.st_size);
}

Result<std::unique_ptr<ByteSource>> LocalBlobStore::Open(const Sha256& id, ByteRange range) {
  auto src = OpenFileRange(BlobPath(id), range);
  if (!src) {
    if (src.error().code == ErrorCode::NotFound) return UnknownBlob(id);
    return std::move(src).error();
  }
  return std::unique_ptr<ByteSource>(std::move(*src));
}

Result<std::unique_ptr<BlobWriter>> LocalBlobStore::Create(const Sha256& expected,
                                                           std::optional<uint64_t> expected_size) {
  for (int attempt = 0;; ++attempt) {
    fs::path tmp_path = tmp_dir_ / (expected.Hex() + "." + RandomHex(8));
    int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      return std::unique_ptr<BlobWriter>(std::make_unique<LocalBlobWriter>(
          fd, std::move(tmp_path), blobs_dir_, expected, expected_size));
    }
    if ((errno != EEXIST && errno != EINTR) || attempt == 3) {
      return IoError("create", tmp_path, errno);
    }
  }
}

Result<Sha256> LocalBlobStore::Adopt(const std::string& path, uint64_t size) {
  struct stat file {
  }, store{};
  if (::stat(path.c_str(), &file) != 0) return IoError("stat", path, errno);
  if (::stat(blobs_dir_.c_str(), &store) != 0 || file.st_dev != store.st_dev)
    return BlobStore::Adopt(path, size);  // another file system: a copy
  if (uint64_t(file.st_size) != size)
    return MakeError(ErrorCode::SizeInvalid, path + " holds " + std::to_string(file.st_size) +
                                                 " bytes, expected " + std::to_string(size));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path, errno);
  Sha256Hasher hasher;
  std::string buf(1 << 20, '\0');
  Result<void> read;
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read = IoError("read", path, errno);
    if (n <= 0) break;
    hasher.Update(std::string_view(buf.data(), size_t(n)));
  }
  // The bytes are durable before the name that publishes them.
  if (read && ::fsync(fd) != 0) read = IoError("fsync", path, errno);
  ::close(fd);
  HANGAR_TRY(read);
  Sha256 sha = hasher.Finish();
  HANGAR_TRY(local_fs::PublishFile(path, blobs_dir_, sha));
  return sha;
}

Result<void> LocalBlobStore::Delete(const Sha256& id) {
  fs::path path = BlobPath(id);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return UnknownBlob(id);
    return IoError("unlink", path, errno);
  }
  // Fan-out dirs stay: removing them would race with a concurrent Commit's rename.
  return {};
}

Result<std::string> LocalBlobStore::RedirectUrl(const Sha256& id, std::chrono::seconds ttl) {
  return std::string();
}

Result<void> LocalBlobStore::CheckUsable() {
  std::error_code ec;
  fs::create_directories(blobs_dir_, ec);
  fs::create_directories(uploads_dir_, ec);
  for (const fs::path* dir : {&blobs_dir_, &tmp_dir_, &uploads_dir_}) {
    if (::access(dir->c_str(), R_OK | W_OK | X_OK) != 0) {
      return MakeError(ErrorCode::Unavailable, "blob store directory " + dir->string() +
                                                   " is not usable: " + std::strerror(errno));
    }
  }
  return {};
}

Result<std::vector<TmpListing>> LocalBlobStore::SweepTemporaries(std::chrono::seconds older_than,
                                                                 bool dry_run) {
  std::error_code ec;
  fs::directory_iterator it(tmp_dir_, ec);
  auto list_error = [&] {
    return MakeError(ErrorCode::Internal, "list " + tmp_dir_.string() + ": " + ec.message());
  };
  if (ec) return list_error();
  const auto cutoff = fs::file_time_type::clock::now() - older_than;
  std::vector<TmpListing> swept;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec)) continue;
    auto mtime = it->last_write_time(entry_ec);
    if (entry_ec || mtime >= cutoff) continue;
    uint64_t size = it->file_size(entry_ec);
    if (entry_ec) continue;  // gone meanwhile
    if (!dry_run && !fs::remove(it->path(), entry_ec)) continue;
    swept.push_back({it->path().filename().string(), size});
  }
  if (ec) return list_error();
  return swept;
}

}  // namespace hangar::storage

#include "client/file_io.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/hex.h"

namespace hangar::client {

namespace {
constexpr size_t kChunk = 1 << 20;  // bytes per read while hashing
}  // namespace

Result<File> File::Open(const std::filesystem::path& path, int flags, int mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) {
    int err = errno;
    return MakeError(err == ENOENT ? ErrorCode::NotFound : ErrorCode::Internal,
                     "cannot open " + path.string() + ": " + std::strerror(err));
  }
  return File(fd);
}

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

Result<uint64_t> File::Size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return MakeError(ErrorCode::Internal, std::string("fstat: ") + std::strerror(errno));
  }
  return static_cast<uint64_t>(st.st_size);
}

Result<size_t> FileRangeSource::Read(std::span<char> buf) {
  if (left_ == 0) return size_t{0};
  size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), left_));
  ssize_t n;
  do {
    n = ::pread(fd_, buf.data(), want, static_cast<off_t>(pos_));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return MakeError(ErrorCode::Internal, std::string("read: ") + std::strerror(errno));
  if (n == 0) return MakeError(ErrorCode::Internal, "file shrank while being uploaded");
  pos_ += static_cast<uint64_t>(n);
  left_ -= static_cast<uint64_t>(n);
  sent_ += static_cast<uint64_t>(n);
  if (on_read_) on_read_(static_cast<size_t>(n));
  return static_cast<size_t>(n);
}

struct ContentHasher::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

ContentHasher::ContentHasher(Kind kind, uint64_t size) : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx_->md, kind == Kind::Sha256 ? EVP_sha256() : EVP_sha1(), nullptr);
  if (kind == Kind::GitBlob) {
    std::string header = "blob " + std::to_string(size);
    EVP_DigestUpdate(ctx_->md, header.data(), header.size() + 1);  // with the NUL
  }
}

ContentHasher::~ContentHasher() = default;
ContentHasher::ContentHasher(ContentHasher&&) noexcept = default;
ContentHasher& ContentHasher::operator=(ContentHasher&&) noexcept = default;

void ContentHasher::Update(const void* data, size_t n) { EVP_DigestUpdate(ctx_->md, data, n); }

std::string ContentHasher::FinishHex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &len);
  return HexEncode(std::span<const uint8_t>(out, len));
}

Result<void> HashRange(int fd, uint64_t offset, uint64_t length, ContentHasher& h,
                       const std::function<void(size_t)>& on_read) {
  std::vector<char> buf(
      static_cast<size_t>(std::min<uint64_t>(kChunk, std::max<uint64_t>(length, 1))));
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), length));
    ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(ErrorCode::Internal, std::string("read: ") + std::strerror(errno));
    if (n == 0) return MakeError(ErrorCode::Internal, "file shorter than expected");
    h.Update(buf.data(), static_cast<size_t>(n));
    if (on_read) on_read(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
    length -= static_cast<uint64_t>(n);
  }
  return {};
}

Result<std::string> HashFile(const std::filesystem::path& path, ContentHasher::Kind kind,
                             uint64_t size, const std::function<void(size_t)>& on_read) {
  HANGAR_ASSIGN_OR_RETURN(auto f, File::Open(path, O_RDONLY));
  ::posix_fadvise(f.fd(), 0, 0, POSIX_FADV_SEQUENTIAL);
  ContentHasher h(kind, size);
  HANGAR_TRY(HashRange(f.fd(), 0, size, h, on_read));
  return h.FinishHex();
}

}  // namespace hangar::client

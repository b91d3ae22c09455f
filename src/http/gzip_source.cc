#include "http/gzip_source.h"

#include <zlib.h>

#include <vector>

namespace hangar::http {

namespace {

class Gunzip final : public ByteSource {
 public:
  Gunzip(std::shared_ptr<ByteSource> in, uint64_t max_output)
      : in_(std::move(in)), max_output_(max_output), inbuf_(64 * 1024) {
    zs_.zalloc = Z_NULL;
    zs_.zfree = Z_NULL;
    zs_.opaque = Z_NULL;
    ok_ = inflateInit2(&zs_, 16 + MAX_WBITS) == Z_OK;  // 16+: gzip wrapper only
  }
  ~Gunzip() override { inflateEnd(&zs_); }

  Result<size_t> Read(std::span<char> buf) override {
    if (!ok_) return MakeError(ErrorCode::Internal, "zlib init failed");
    if (finished_ || buf.empty()) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs_.avail_out = static_cast<uInt>(buf.size());
    while (zs_.avail_out == buf.size()) {
      if (zs_.avail_in == 0) {
        HANGAR_ASSIGN_OR_RETURN(auto n, in_->Read(inbuf_));
        if (n == 0) return MakeError(ErrorCode::BadRequest, "gzip body is truncated");
        zs_.next_in = reinterpret_cast<Bytef*>(inbuf_.data());
        zs_.avail_in = static_cast<uInt>(n);
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        finished_ = true;
        break;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return MakeError(ErrorCode::BadRequest, "gzip body is corrupt");
      }
    }
    size_t produced = buf.size() - zs_.avail_out;
    total_ += produced;
    if (max_output_ && total_ > max_output_) {
      return MakeError(ErrorCode::PayloadTooLarge, "decoded request body is too large");
    }
    return produced;
  }

 private:
  std::shared_ptr<ByteSource> in_;
  uint64_t max_output_;
  std::vector<char> inbuf_;
  z_stream zs_{};
  bool ok_ = false;
  bool finished_ = false;
  uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> GunzipSource(std::shared_ptr<ByteSource> compressed,
                                         uint64_t max_output) {
  return std::make_unique<Gunzip>(std::move(compressed), max_output);
}

}  // namespace hangar::http

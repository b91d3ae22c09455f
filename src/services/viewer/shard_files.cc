// The export's files on local disk (shard_files.h).

#include "services/viewer/shard_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <system_error>
#include <thread>

#include "core/util.h"

namespace hangar::services::viewer {
namespace fs = std::filesystem;

std::string ShardCachePath(const std::string& cache_dir, const Sha256& sha256) {
  return (fs::path(cache_dir) / (sha256.Hex() + ".parquet")).string();
}

// Copies `src` to a new file at `path`.
Result<void> CopyToFile(ByteSource& src, const fs::path& path, Sha256Hasher* hasher) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return MakeError(ErrorCode::Internal, "cannot create " + path.string());
  std::string buf(1 << 20, '\0');
  while (true) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, src.Read(buf));
    if (n == 0) break;
    if (hasher) hasher->Update(std::string_view(buf.data(), n));
    out.write(buf.data(), static_cast<std::streamsize>(n));
    if (!out) return MakeError(ErrorCode::Internal, "cannot write " + path.string());
  }
  out.close();
  if (!out) return MakeError(ErrorCode::Internal, "cannot write " + path.string());
  return {};
}

Result<Sha256> StoreShard(storage::BlobStore& blobs, const std::string& path, uint64_t size,
                          const std::string& cache_dir) {
  // A second name for the file in the cache first (a link: one copy of the bytes on disk
  // when the cache and the blobs share a file system), then the file becomes the blob, then
  // the cache's name is the blob's sha256.
  std::error_code ec;
  std::string tmp = (fs::path(cache_dir) / ("shard.tmp-" + RandomHex(8))).string();
  fs::create_hard_link(path, tmp, ec);
  if (ec) fs::copy_file(path, tmp, ec);
  if (ec) return MakeError(ErrorCode::Internal, "cannot cache " + path + ": " + ec.message());
  auto sha = blobs.Adopt(path, size);
  if (sha) {
    std::string to = ShardCachePath(cache_dir, *sha);
    if (!fs::exists(to, ec)) fs::rename(tmp, to, ec);
    if (ec) sha = MakeError(ErrorCode::Internal, "cannot cache " + to + ": " + ec.message());
  }
  fs::remove(tmp, ec);  // when not renamed
  return sha;
}

Result<std::vector<Sha256>> StoreShards(storage::BlobStore& blobs,
                                        const std::vector<std::pair<std::string, uint64_t>>& files,
                                        const std::string& cache_dir, size_t threads) {
  std::vector<Result<Sha256>> stored(files.size(), MakeError(ErrorCode::Internal, "not stored"));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < files.size();) {
      stored[i] = StoreShard(blobs, files[i].first, files[i].second, cache_dir);
      if (!stored[i]) next = files.size();  // stop at the first failure
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, files.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<Sha256> out;
  for (auto& r : stored) {
    if (!r) return std::move(r).error();
    out.push_back(*r);
  }
  return out;
}

Result<void> LinkOrCopy(ByteSource& src, const fs::path& path) {
  // A whole local blob is linked (no byte is copied): the blob store's files are
  // content-addressed and never written again, and a link outlives the blob's deletion.
  if (auto region = src.Region(); region && region->offset == 0) {
    struct stat st {};
    if (::fstat(region->fd, &st) == 0 && uint64_t(st.st_size) == region->length) {
      std::string fd_path = "/proc/self/fd/" + std::to_string(region->fd);
      if (::linkat(AT_FDCWD, fd_path.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0)
        return {};
    }
  }
  return CopyToFile(src, path);  // another file system, an object store, a window
}

// Moves (or, across file systems, copies) the shard into the cache under its sha256.
Result<void> IntoCache(const std::string& from, const std::string& to, bool keep_source) {
  std::error_code ec;
  if (fs::exists(to, ec)) return {};
  std::string tmp = to + ".tmp-" + RandomHex(8);
  if (keep_source || (fs::rename(from, tmp, ec), ec)) {
    ec.clear();
    fs::create_hard_link(from, tmp, ec);  // the same bytes under a second name
    if (ec) fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) return MakeError(ErrorCode::Internal, "cannot cache " + from + ": " + ec.message());
  }
  fs::rename(tmp, to, ec);
  if (ec) return MakeError(ErrorCode::Internal, "cannot cache " + to + ": " + ec.message());
  return {};
}

Result<std::string> FetchShard(storage::BlobStore& blobs, const std::string& cache_dir,
                               const Sha256& sha256) {
  std::string path = ShardCachePath(cache_dir, sha256);
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  HANGAR_ASSIGN_OR_RETURN(auto src, blobs.Open(sha256, storage::ByteRange::From(0)));
  fs::create_directories(cache_dir, ec);
  std::string tmp = path + ".tmp-" + RandomHex(8);
  Sha256Hasher hasher;  // checked as it is copied
  auto copied = CopyToFile(*src, tmp, &hasher);
  if (copied && hasher.Finish() != sha256)
    copied = MakeError(ErrorCode::Internal, "blob " + sha256.Hex() + " does not hold its bytes");
  if (copied) {
    fs::rename(tmp, path, ec);
    if (ec) copied = MakeError(ErrorCode::Internal, "cannot cache " + path + ": " + ec.message());
  }
  if (!copied) {
    fs::remove(tmp, ec);
    return std::move(copied).error();
  }
  return path;
}

}  // namespace hangar::services::viewer

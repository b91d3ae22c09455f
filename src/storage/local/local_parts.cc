// LocalBlobStore's multipart staging and blob listing (layout in local_blob_store.h).

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <system_error>

#include "core/util.h"
#include "storage/local/local_blob_store.h"
#include "storage/local/local_fs.h"

namespace hangar::storage {
namespace {

namespace fs = std::filesystem;
using local_fs::IoError;

constexpr size_t kIoChunk = 1 << 20;
constexpr size_t kMaxMissingNamed = 20;  // a Conflict message names at most this many parts

bool IsStagingKey(std::string_view key) {
  return key.size() == 32 && std::all_of(key.begin(), key.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Parses "<a> <b>" of two unsigned numbers, the second may be a hex word instead.
bool ParseTwo(const std::string& line, uint64_t& a, std::string& b) {
  auto space = line.find(' ');
  if (space == std::string::npos) return false;
  auto [p, ec] = std::from_chars(line.data(), line.data() + space, a);
  if (ec != std::errc() || p != line.data() + space) return false;
  b = line.substr(space + 1);
  while (!b.empty() && (b.back() == '\n' || b.back() == '\r')) b.pop_back();
  return !b.empty();
}

std::optional<std::string> ReadLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// Writes `content` to `path` atomically: a temporary beside it, fsync, rename.
Result<void> WriteSmallFile(const fs::path& path, const std::string& content) {
  fs::path tmp = path;
  tmp += ".tmp-" + RandomHex(8);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create", tmp, errno);
  auto w = local_fs::WriteAll(fd, content.data(), content.size(), tmp);
  if (w && ::fsync(fd) != 0) w = IoError("fsync", tmp, errno);
  ::close(fd);
  if (w && ::rename(tmp.c_str(), path.c_str()) != 0) w = IoError("rename to", path, errno);
  if (!w) ::unlink(tmp.c_str());
  return w;
}

struct Meta {
  uint64_t size = 0;
  uint64_t part_size = 0;
  uint64_t PartCount() const { return (size + part_size - 1) / part_size; }
};

Result<Meta> ReadMeta(const fs::path& dir) {
  auto line = ReadLine(dir / "meta");
  Meta m;
  std::string part_size;
  if (!line || !ParseTwo(*line, m.size, part_size)) {
    return MakeError(ErrorCode::Internal, "unreadable upload metadata in " + dir.string());
  }
  auto [p, ec] =
      std::from_chars(part_size.data(), part_size.data() + part_size.size(), m.part_size);
  if (ec != std::errc() || m.part_size == 0) {
    return MakeError(ErrorCode::Internal, "unreadable upload metadata in " + dir.string());
  }
  return m;
}

// The parts recorded in `dir`, by number.
std::map<uint64_t, PartInfo> ReadParts(const fs::path& dir) {
  std::map<uint64_t, PartInfo> parts;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.ends_with(".part")) continue;
    PartInfo part;
    auto [p, perr] = std::from_chars(name.data(), name.data() + name.size() - 5, part.number);
    if (perr != std::errc() || p != name.data() + name.size() - 5) continue;
    auto line = ReadLine(it->path());
    if (!line || !ParseTwo(*line, part.size, part.etag)) continue;
    parts.emplace(part.number, std::move(part));
  }
  return parts;
}

Error NoStaging(std::string_view handle) {
  return MakeError(ErrorCode::NotFound, "no upload staging area " + std::string(handle));
}

// Opens <dir>/data and takes flock(2) `lock` (LOCK_SH for part writers, LOCK_EX for the
// completion), then checks that <dir>/data is still that file: a completion renames it
// into blobs/, and a part writer that got its lock afterwards must not write into the
// published blob. Returns the fd (the lock goes with close), -1 when the staging area is
// gone (NotFound for the caller), or an error.
Result<int> OpenLockedData(const fs::path& dir, int flags, int lock) {
  fs::path data = dir / "data";
  int fd = ::open(data.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Result<int>(-1) : Result<int>(IoError("open", data, errno));
  while (::flock(fd, lock) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    return IoError("lock", data, err);
  }
  struct stat held, named;
  if (::fstat(fd, &held) != 0 || ::stat(data.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
      held.st_dev != named.st_dev) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// An exclusive hold on part `number` of staging area `dir` (its "<n>.lock" file), so two
// writers of one part take turns and its marker always describes the bytes the last one
// left; closing the descriptor lets go. -1 when the staging area is gone.
Result<int> LockPart(const fs::path& dir, uint64_t number) {
  fs::path lock = dir / (std::to_string(number) + ".lock");
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return errno == ENOENT ? Result<int>(-1) : Result<int>(IoError("open", lock, errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    return IoError("lock", lock, err);
  }
  return fd;
}

}  // namespace

Result<fs::path> LocalBlobStore::StagingDir(std::string_view handle) const {
  if (!IsStagingKey(handle)) {
    return MakeError(ErrorCode::BadRequest, "malformed upload key " + std::string(handle));
  }
  return uploads_dir_ / std::string(handle);
}

Result<std::string> LocalBlobStore::BeginParts(std::string_view key, uint64_t size,
                                               uint64_t part_size) {
  if (part_size == 0) return MakeError(ErrorCode::BadRequest, "part size must be positive");
  HANGAR_ASSIGN_OR_RETURN(fs::path dir, StagingDir(key));
  std::error_code ec;
  fs::create_directories(uploads_dir_, ec);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST)
      return MakeError(ErrorCode::Conflict, "upload key " + std::string(key) + " is taken");
    return IoError("mkdir", dir, errno);
  }
  fs::path data = dir / "data";
  int fd = ::open(data.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create", data, errno);
  int rc = ::ftruncate(fd, static_cast<off_t>(size));
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    fs::remove_all(dir, ec);
    return IoError("truncate", data, err);
  }
  auto meta =
      WriteSmallFile(dir / "meta", std::to_string(size) + " " + std::to_string(part_size) + "\n");
  if (meta) meta = local_fs::SyncDir(dir);
  if (meta) meta = local_fs::SyncDir(uploads_dir_);
  if (!meta) {
    fs::remove_all(dir, ec);
    return std::move(meta).error();
  }
  return std::string(key);
}

Result<PartInfo> LocalBlobStore::PutPart(std::string_view handle, uint64_t number, uint64_t offset,
                                         uint64_t size, ByteSource& body,
                                         std::optional<Sha256> sha256) {
  HANGAR_ASSIGN_OR_RETURN(fs::path dir, StagingDir(handle));
  auto meta = ReadMeta(dir);
  if (!meta) return fs::exists(dir) ? std::move(meta).error() : NoStaging(handle);
  if (number == 0 || offset > meta->size || size > meta->size - offset) {
    return MakeError(ErrorCode::BadRequest, "part " + std::to_string(number) +
                                                " lies outside the upload's " +
                                                std::to_string(meta->size) + " bytes");
  }
  fs::path marker = dir / (std::to_string(number) + ".part");
  fs::path data = dir / "data";
  // A second PUT of this part waits for the first: their bytes would mix in `data`.
  HANGAR_ASSIGN_OR_RETURN(int part_fd, LockPart(dir, number));
  if (part_fd < 0) return NoStaging(handle);
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{part_fd};
  // Shared with other parts; excludes a completion until this part is done.
  HANGAR_ASSIGN_OR_RETURN(int fd, OpenLockedData(dir, O_WRONLY, LOCK_SH));
  if (fd < 0) return NoStaging(handle);
  // Unrecorded while its bytes change: a failure or crash below leaves it "missing".
  ::unlink(marker.c_str());

  Sha256Hasher hasher;
  uint64_t written = 0;
  std::vector<char> buf(kIoChunk);
  Result<void> status;
  while (status) {
    auto n = body.Read(buf);
    if (!n) {
      status = std::move(n).error();
      break;
    }
    if (*n == 0) break;
    if (*n > size - written) {
      status =
          MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(number) + " is longer than " +
                                                std::to_string(size) + " bytes");
      break;
    }
    hasher.Update(std::string_view(buf.data(), *n));
    status = local_fs::PWriteAll(fd, buf.data(), *n, offset + written, data);
    written += *n;
  }
  if (status && written != size) {
    status = MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(number) + " has " +
                                                   std::to_string(written) + " bytes, expected " +
                                                   std::to_string(size));
  }
  Sha256 actual = hasher.Finish();
  if (status && sha256 && actual != *sha256) {
    status = MakeError(ErrorCode::DigestInvalid, "part " + std::to_string(number) + " has sha256 " +
                                                     actual.Hex() + ", expected " + sha256->Hex());
  }
  if (status && ::fdatasync(fd) != 0) status = IoError("fdatasync", data, errno);
  PartInfo part{number, size, actual.Hex()};
  // The marker is written under the lock, so a completion sees every part or waits.
  if (status) status = WriteSmallFile(marker, std::to_string(size) + " " + part.etag + "\n");
  ::close(fd);
  HANGAR_TRY(status);
  return part;
}

Result<std::string> LocalBlobStore::PartUrl(std::string_view, uint64_t, uint64_t,
                                            std::chrono::seconds) {
  return std::string();
}

Result<std::vector<PartInfo>> LocalBlobStore::ListParts(std::string_view handle) {
  HANGAR_ASSIGN_OR_RETURN(fs::path dir, StagingDir(handle));
  if (!fs::exists(dir / "meta")) return NoStaging(handle);
  std::vector<PartInfo> out;
  for (auto& [n, part] : ReadParts(dir)) out.push_back(std::move(part));
  return out;
}

Result<void> LocalBlobStore::CompleteParts(std::string_view handle, const Sha256& expected,
                                           uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(fs::path dir, StagingDir(handle));
  std::error_code ec;
  fs::path data = dir / "data";
  if (!fs::exists(data)) {
    // A completion that crashed after publishing, or a concurrent one that won.
    if (fs::exists(BlobPath(expected))) {
      fs::remove_all(dir, ec);
      return {};
    }
    return NoStaging(handle);
  }
  HANGAR_ASSIGN_OR_RETURN(Meta meta, ReadMeta(dir));
  if (meta.size != size) {
    fs::remove_all(dir, ec);
    return MakeError(ErrorCode::SizeInvalid, "upload holds " + std::to_string(meta.size) +
                                                 " bytes, expected " + std::to_string(size));
  }
  // Exclusive: waits for parts being written, keeps new ones out until data is published.
  HANGAR_ASSIGN_OR_RETURN(int fd, OpenLockedData(dir, O_RDONLY, LOCK_EX));
  if (fd < 0) {  // a concurrent completion published it meanwhile
    if (fs::exists(BlobPath(expected))) return {};
    return NoStaging(handle);
  }
  auto parts = ReadParts(dir);
  std::vector<uint64_t> missing;
  for (uint64_t n = 1; n <= meta.PartCount(); ++n) {
    uint64_t want = std::min(meta.part_size, meta.size - (n - 1) * meta.part_size);
    auto it = parts.find(n);
    if (it == parts.end() || it->second.size != want) missing.push_back(n);
  }
  if (!missing.empty()) {
    std::string names;
    for (size_t i = 0; i < missing.size() && i < kMaxMissingNamed; ++i) {
      names += (i ? ", " : "") + std::to_string(missing[i]);
    }
    if (missing.size() > kMaxMissingNamed) names += ", ...";
    ::close(fd);
    return MakeError(ErrorCode::Conflict,
                     std::to_string(missing.size()) + " part(s) not uploaded yet: " + names);
  }

  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Sha256Hasher hasher;
  std::vector<char> buf(kIoChunk);
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return IoError("read", data, err);
    }
    if (n == 0) break;
    hasher.Update(std::string_view(buf.data(), static_cast<size_t>(n)));
    total += static_cast<uint64_t>(n);
  }
  Sha256 actual = hasher.Finish();
  if (total != size || actual != expected) {
    fs::remove_all(dir, ec);
    ::close(fd);
    return MakeError(ErrorCode::DigestInvalid, "uploaded content has sha256 " + actual.Hex() +
                                                   ", expected " + expected.Hex());
  }
  // Every part was fdatasynced before its marker was written: the bytes are durable. The
  // rename happens under the lock; writers that were waiting find data gone (NotFound).
  auto published = local_fs::PublishFile(data, blobs_dir_, expected);
  ::close(fd);
  HANGAR_TRY(published);
  fs::remove_all(dir, ec);
  return {};
}

Result<void> LocalBlobStore::AbortParts(std::string_view handle) {
  HANGAR_ASSIGN_OR_RETURN(fs::path dir, StagingDir(handle));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return IoError("remove", dir, ec.value());
  return {};
}

Result<std::vector<std::string>> LocalBlobStore::ListStaleParts(std::chrono::seconds older_than) {
  std::vector<std::string> stale;
  std::error_code ec;
  fs::directory_iterator it(uploads_dir_, ec);
  if (ec) return IoError("list", uploads_dir_, ec.value());
  const auto cutoff = fs::file_time_type::clock::now() - older_than;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return IoError("list", uploads_dir_, ec.value());
    std::string name = it->path().filename().string();
    if (!IsStagingKey(name)) continue;
    std::error_code entry_ec;
    auto newest = fs::last_write_time(it->path(), entry_ec);  // parts added or removed
    auto data_time = fs::last_write_time(it->path() / "data", entry_ec);
    if (!entry_ec) newest = std::max(newest, data_time);
    if (newest < cutoff) stale.push_back(std::move(name));
  }
  return stale;
}

Result<void> LocalBlobStore::ForEachBlob(
    const std::function<Result<void>(const BlobListing&)>& fn) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(blobs_dir_, ec), end; it != end; it.increment(ec)) {
    if (ec) return IoError("list", blobs_dir_, ec.value());
    if (it.depth() != 2) continue;
    auto id = Sha256::ParseHex(it->path().filename().string());
    if (!id) continue;
    struct stat st;
    if (::stat(it->path().c_str(), &st) != 0) continue;  // deleted meanwhile
    HANGAR_TRY(fn(BlobListing{*id, static_cast<uint64_t>(st.st_size),
                              static_cast<int64_t>(st.st_mtim.tv_sec)}));
  }
  if (ec) return IoError("list", blobs_dir_, ec.value());
  return {};
}

}  // namespace hangar::storage

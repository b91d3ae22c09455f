// OciPull (oci_transfer.h): parts fetched by `workers` straight into a preallocated
// temporary file at their offsets, each part hashed as it arrives; when the manifest gives
// a multi-part file's whole sha256, one more thread hashes the file in order as its parts
// land (re-reading them from the page cache) and checks it.

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "client/file_io.h"
#include "client/oci_manifest.h"
#include "client/oci_transfer.h"
#include "client/parallel.h"
#include "core/sha256.h"

namespace hangar::client {

namespace fs = std::filesystem;

namespace {

constexpr size_t kWriteChunk = 1 << 20;  // bytes buffered per part before a pwrite
// A received chunk at least this large is written as it is, without the copy into the
// part's buffer (libcurl hands over up to its receive buffer, 1 MiB, per call).
constexpr size_t kDirectWrite = 256 << 10;

Result<void> WriteAt(int fd, const char* data, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return MakeError(ErrorCode::Internal, std::string("write: ") + std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return {};
}

// Whether `p` (existing) lies inside the directory `root` (canonical).
bool Inside(const fs::path& root, const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (ec) return false;
  std::string r = root.string(), s = c.string();
  return s == r || (s.starts_with(r) && (r.ends_with("/") || s[r.size()] == '/'));
}

// One file being pulled: its temporary file and which parts have landed.
struct Target {
  FileEntry entry;
  fs::path final_path, tmp_path;
  File fd;
  std::vector<char> landed;  // per part, under the verifier's mutex
  bool renamed = false;
};

// Creates every target's directory and preallocated temporary file. Errors: BadRequest
// for a name that resolves outside `root` (a symlinked directory), Internal for I/O.
Result<void> Prepare(const fs::path& root, std::vector<Target>& targets) {
  for (auto& t : targets) {
    t.final_path = root / fs::path(t.entry.path);
    fs::path dir = t.final_path.parent_path();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      return MakeError(ErrorCode::Internal, "cannot create " + dir.string() + ": " + ec.message());
    if (!Inside(root, dir)) {
      return MakeError(ErrorCode::BadRequest,
                       "file name '" + t.entry.path + "' escapes the output directory (symlink)");
    }
    if (fs::is_directory(fs::symlink_status(t.final_path))) {
      return MakeError(ErrorCode::BadRequest, t.final_path.string() + " is a directory");
    }
    t.tmp_path = dir / ("." + t.final_path.filename().string() + ".hangar-pull");
    HANGAR_ASSIGN_OR_RETURN(t.fd, File::Open(t.tmp_path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    if (t.entry.size > 0) {
      int rc = ::posix_fallocate(t.fd.fd(), 0, static_cast<off_t>(t.entry.size));
      if (rc == EOPNOTSUPP || rc == EINVAL) {
        rc = ::ftruncate(t.fd.fd(), static_cast<off_t>(t.entry.size)) == 0 ? 0 : errno;
      }
      if (rc != 0) {
        return MakeError(ErrorCode::Internal, "cannot allocate " + std::to_string(t.entry.size) +
                                                  " bytes for " + t.tmp_path.string() + ": " +
                                                  std::strerror(rc));
      }
    }
    t.landed.assign(t.entry.parts.size(), 0);
  }
  return {};
}

// Hashes each file in order as its parts land (the "whole file" check).
class Verifier {
 public:
  explicit Verifier(std::vector<Target>& targets) : targets_(targets) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Verifier() { (void)Stop(); }

  void Landed(size_t file, size_t part) {
    std::lock_guard lock(mu_);
    targets_[file].landed[part] = 1;
    cv_.notify_all();
  }
  // Ends the thread (early if parts are still missing); returns its verdict.
  Result<void> Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    if (error_) return *error_;
    return {};
  }

 private:
  bool WaitFor(size_t file, size_t part) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return targets_[file].landed[part] != 0 || stop_; });
    return targets_[file].landed[part] != 0;
  }

  void Run() {
    std::vector<char> buf(kWriteChunk);
    for (size_t i = 0; i < targets_.size(); ++i) {
      auto& t = targets_[i];
      // No whole-file sha256 in the manifest, or a single part whose digest is the
      // file's: FetchPart's checks of the parts already cover every byte.
      if (t.entry.sha256.empty() ||
          (t.entry.parts.size() == 1 && t.entry.parts[0].digest == "sha256:" + t.entry.sha256)) {
        continue;
      }
      Sha256Hasher h;
      for (size_t p = 0; p < t.entry.parts.size(); ++p) {
        if (!WaitFor(i, p)) return;
        const auto& part = t.entry.parts[p];
        for (uint64_t off = part.offset, end = part.offset + part.length; off < end;) {
          size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - off));
          ssize_t n = ::pread(t.fd.fd(), buf.data(), want, static_cast<off_t>(off));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            error_ = MakeError(ErrorCode::Internal, "cannot read back " + t.tmp_path.string());
            return;
          }
          h.Update(std::string_view(buf.data(), static_cast<size_t>(n)));
          off += static_cast<uint64_t>(n);
        }
      }
      std::string got = h.Finish().Hex();
      if (!t.entry.sha256.empty() && got != t.entry.sha256) {
        error_ = MakeError(ErrorCode::DigestInvalid,
                           t.entry.path + ": the file hashes to sha256:" + got +
                               ", the manifest says sha256:" + t.entry.sha256);
        return;
      }
    }
  }

  std::vector<Target>& targets_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<Error> error_;
  std::thread thread_;
};

// Fetches one part into its place, checking its digest.
Result<void> FetchPart(OciClient& client, const std::string& repo, Target& t, size_t p,
                       Progress* progress) {
  const FilePart& part = t.entry.parts[p];
  std::string label =
      t.entry.path + " part " + std::to_string(p + 1) + "/" + std::to_string(t.entry.parts.size());
  if (!part.digest.starts_with("sha256:")) {
    return MakeError(ErrorCode::DigestInvalid,
                     label + ": only sha256 layers can be pulled, not " + part.digest);
  }
  if (part.length == 0) return {};
  std::vector<char> buf;
  buf.reserve(kWriteChunk);
  uint64_t written = 0, received = 0;
  Sha256Hasher hasher;
  std::optional<Error> too_long;
  auto flush = [&]() -> Result<void> {
    HANGAR_TRY(WriteAt(t.fd.fd(), buf.data(), buf.size(), part.offset + written));
    written += buf.size();
    buf.clear();
    return {};
  };
  net::BodySink sink = [&](std::span<const char> chunk) -> Result<void> {
    if (received + chunk.size() > part.length) {
      return MakeError(ErrorCode::DigestInvalid, label + ": the blob is longer than its " +
                                                     std::to_string(part.length) + " bytes");
    }
    hasher.Update(std::string_view(chunk.data(), chunk.size()));
    received += chunk.size();
    if (progress) progress->Add(static_cast<int64_t>(chunk.size()));
    if (buf.empty() && chunk.size() >= kDirectWrite) {
      HANGAR_TRY(WriteAt(t.fd.fd(), chunk.data(), chunk.size(), part.offset + written));
      written += chunk.size();
      return {};
    }
    while (!chunk.empty()) {
      size_t n = std::min(chunk.size(), kWriteChunk - buf.size());
      buf.insert(buf.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(n));
      chunk = chunk.subspan(n);
      if (buf.size() == kWriteChunk) HANGAR_TRY(flush());
    }
    return {};
  };
  auto restart = [&] {
    if (progress) progress->Add(-static_cast<int64_t>(received));
    buf.clear();
    written = received = 0;
    hasher = Sha256Hasher();
  };
  auto got = client.GetBlob(repo, part.digest, sink, restart);
  if (!got) return MakeError(got.error().code, label + ": " + got.error().message);
  HANGAR_TRY(flush());
  std::string digest = "sha256:" + hasher.Finish().Hex();
  if (received != part.length || digest != part.digest) {
    return MakeError(ErrorCode::DigestInvalid,
                     label + ": got " + std::to_string(received) + " bytes hashing to " + digest +
                         ", expected " + std::to_string(part.length) + " bytes, " + part.digest);
  }
  return {};
}

}  // namespace

Result<OciPullResult> OciPull(OciClient& client, const OciRef& ref, const OciPullOptions& opts) {
  HANGAR_ASSIGN_OR_RETURN(auto manifest, client.GetManifest(ref.repository, ref.Reference()));
  OciPullResult result;
  result.manifest_digest = manifest.digest;
  HANGAR_ASSIGN_OR_RETURN(auto files, FilesOfManifest(manifest.bytes, &result.layers_skipped));
  if (files.empty()) {
    return MakeError(ErrorCode::BadRequest,
                     ref.repository + ":" + ref.Reference() + " names no files to pull");
  }

  std::error_code ec;
  fs::create_directories(opts.output, ec);
  fs::path root = fs::canonical(opts.output, ec);
  if (ec)
    return MakeError(ErrorCode::Internal,
                     "cannot use " + opts.output.string() + ": " + ec.message());
  std::vector<Target> targets(files.size());
  struct Task {
    size_t file, part;
  };
  std::vector<Task> tasks;
  uint64_t total = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    targets[i].entry = std::move(files[i]);
    for (size_t p = 0; p < targets[i].entry.parts.size(); ++p) tasks.push_back({i, p});
    total += targets[i].entry.size;
  }
  auto cleanup = [&] {
    for (auto& t : targets) {
      if (!t.tmp_path.empty() && !t.renamed) fs::remove(t.tmp_path, ec);
    }
  };
  if (auto prepared = Prepare(root, targets); !prepared) {
    cleanup();
    return std::move(prepared).error();
  }

  if (opts.progress) opts.progress->Start("pulling", total);
  Verifier verifier(targets);
  auto fetched = RunParallel(tasks.size(), opts.workers, [&](size_t k) -> Result<void> {
    auto& t = targets[tasks[k].file];
    HANGAR_TRY(FetchPart(client, ref.repository, t, tasks[k].part, opts.progress));
    if (opts.log) {
      opts.log("got " + t.entry.path + " part " + std::to_string(tasks[k].part + 1) + "/" +
               std::to_string(t.entry.parts.size()));
    }
    verifier.Landed(tasks[k].file, tasks[k].part);
    return {};
  });
  auto verified = verifier.Stop();
  if (opts.progress) opts.progress->Finish();
  if (!fetched || !verified) {
    cleanup();
    return fetched ? std::move(verified).error() : std::move(fetched).error();
  }
  for (auto& t : targets) {
    t.fd = File();  // close before the rename
    fs::rename(t.tmp_path, t.final_path, ec);
    if (ec) {
      cleanup();
      return MakeError(ErrorCode::Internal, "cannot rename " + t.tmp_path.string() + " to " +
                                                t.final_path.string() + ": " + ec.message());
    }
    t.renamed = true;
    result.bytes += t.entry.size;
    result.parts += t.entry.parts.size();
  }
  result.files = targets.size();
  return result;
}

}  // namespace hangar::client

#include "client/oci_transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <boost/json.hpp>

#include "client/file_io.h"
#include "client/oci_manifest.h"
#include "client/parallel.h"
#include "core/sha256.h"
#include "core/util.h"

namespace hangar::client {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr size_t kIoChunk = 1 << 20;  // bytes per read while hashing, per write while pulling
const std::string kEmptyBlobDigest =
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Rfc3339Now() {
  std::string s = Iso8601(NowUnix());  // "2024-02-19T10:57:45.000Z"
  if (size_t dot = s.find('.'); dot != std::string::npos) s = s.substr(0, dot) + "Z";
  return s;
}

// What an interrupted push leaves for the next run (docs/oci-client.md "Resume"): the
// digest of each finished part and, once hashed, the whole file's sha256. One small JSON
// file per (absolute path, size, mtime, part size); rewritten atomically after each part.
class ResumeRecord {
 public:
  ResumeRecord(const fs::path& dir, const fs::path& abs, uint64_t size, int64_t mtime_ns,
               uint64_t part_size, size_t parts)
      : digests_(parts) {
    if (dir.empty()) return;
    identity_ = abs.string() + "\n" + std::to_string(size) + "\n" + std::to_string(mtime_ns) +
                "\n" + std::to_string(part_size);
    path_ = dir / (Sha256::Of(identity_).Hex().substr(0, 32) + ".json");
    std::ifstream in(path_);
    if (!in) return;
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    json::value v = json::parse(ss.str(), ec);
    if (ec || !v.is_object()) return;  // unreadable: start over
    const auto& o = v.as_object();
    const auto* id = o.if_contains("identity");
    if (id == nullptr || !id->is_string() || id->as_string() != identity_) return;
    if (const auto* s = o.if_contains("sha256"); s != nullptr && s->is_string())
      sha256_ = s->as_string();
    if (const auto* p = o.if_contains("parts"); p != nullptr && p->is_object()) {
      for (const auto& [k, d] : p->as_object()) {
        size_t i = std::strtoull(std::string(k).c_str(), nullptr, 10);
        if (i < digests_.size() && d.is_string() && IsValidOciDigest(d.as_string())) {
          digests_[i] = d.as_string();
        }
      }
    }
  }

  std::string Part(size_t i) {
    std::lock_guard lock(mu_);
    return digests_[i];
  }
  std::string Sha256() {
    std::lock_guard lock(mu_);
    return sha256_;
  }
  void SetPart(size_t i, std::string digest) {
    std::lock_guard lock(mu_);
    digests_[i] = std::move(digest);
    Save();
  }
  void SetSha256(std::string hex) {
    std::lock_guard lock(mu_);
    sha256_ = std::move(hex);
    Save();
  }

 private:
  // Best effort: a record that cannot be written only costs a resume.
  void Save() {
    if (path_.empty()) return;
    json::object parts;
    for (size_t i = 0; i < digests_.size(); ++i) {
      if (!digests_[i].empty()) parts[std::to_string(i)] = digests_[i];
    }
    std::string text = json::serialize(
        json::object{{"identity", identity_}, {"sha256", sha256_}, {"parts", std::move(parts)}});
    std::error_code ec;
    fs::create_directories(path_.parent_path(), ec);
    fs::path tmp = path_.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << text;
      if (!out) return;
    }
    fs::rename(tmp, path_, ec);
  }

  std::mutex mu_;
  fs::path path_;
  std::string identity_;
  std::string sha256_;
  std::vector<std::string> digests_;
};

struct LocalFile {
  fs::path local;
  FileEntry entry;  // path = its name in the artifact
  int64_t mtime_ns = 0;
  File fd;
  std::unique_ptr<ResumeRecord> record;
};

Result<void> AddFile(const fs::path& local, std::string name, std::vector<LocalFile>& out) {
  struct stat st {};
  if (::stat(local.c_str(), &st) != 0) {
    return MakeError(ErrorCode::NotFound,
                     "cannot stat " + local.string() + ": " + std::strerror(errno));
  }
  LocalFile f;
  f.local = local;
  HANGAR_ASSIGN_OR_RETURN(f.entry.path, SafeRelativePath(name));
  f.entry.size = static_cast<uint64_t>(st.st_size);
  f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  out.push_back(std::move(f));
  return {};
}

Result<std::vector<LocalFile>> Collect(const std::vector<fs::path>& paths) {
  std::vector<LocalFile> files;
  if (paths.empty()) return MakeError(ErrorCode::BadRequest, "no files to push");
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      return MakeError(ErrorCode::NotFound, "no such file or directory: " + p.string());
    }
    if (fs::is_regular_file(st)) {
      HANGAR_TRY(AddFile(p, p.filename().string(), files));
    } else if (fs::is_directory(st)) {
      fs::recursive_directory_iterator it(p, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file()) {
          HANGAR_TRY(AddFile(it->path(), it->path().lexically_relative(p).generic_string(), files));
        }
      }
      if (ec)
        return MakeError(ErrorCode::Internal, "cannot list " + p.string() + ": " + ec.message());
    } else {
      return MakeError(ErrorCode::BadRequest, p.string() + " is neither a file nor a directory");
    }
  }
  std::sort(files.begin(), files.end(),
            [](const LocalFile& a, const LocalFile& b) { return a.entry.path < b.entry.path; });
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i].entry.path == files[i - 1].entry.path) {
      return MakeError(ErrorCode::BadRequest, "two files would be named '" + files[i].entry.path +
                                                  "': " + files[i - 1].local.string() + " and " +
                                                  files[i].local.string());
    }
  }
  if (files.empty())
    return MakeError(ErrorCode::BadRequest, "no files to push under the given paths");
  return files;
}

// The sha256 of bytes [0, size) of `fd`, read in order; gives up when `stop` is set.
Result<std::string> HashWhole(int fd, uint64_t size, const std::atomic<bool>& stop) {
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buf(kIoChunk);
  Sha256Hasher h;
  for (uint64_t off = 0; off < size;) {
    if (stop.load()) return MakeError(ErrorCode::Internal, "stopped");
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
    ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return MakeError(ErrorCode::Internal, "read failed or the file shrank");
    h.Update(std::string_view(buf.data(), static_cast<size_t>(n)));
    off += static_cast<uint64_t>(n);
  }
  return h.Finish().Hex();
}

void Note(const std::function<void(std::string_view)>& log, const std::string& line) {
  if (log) log(line);
}

// One part of one file to push.
struct PushTask {
  size_t file, part;
};

// What the push workers count.
struct PushCounters {
  std::atomic<size_t> sent{0}, skipped{0};
  std::atomic<uint64_t> bytes{0};
};

// Every part of every file, and the bytes of all.
struct PushPlan {
  std::vector<PushTask> tasks;
  uint64_t total = 0;
};

// Opens each file and its resume record and plans its parts, taking the digests an earlier
// run recorded.
Result<PushPlan> PlanPush(std::vector<LocalFile>& files, const OciPushOptions& opts) {
  PushPlan plan;
  for (size_t i = 0; i < files.size(); ++i) {
    auto& f = files[i];
    HANGAR_ASSIGN_OR_RETURN(f.fd, File::Open(f.local, O_RDONLY));
    auto parts = PlanParts(f.entry.size, opts.part_size);
    std::error_code ec;
    fs::path abs = fs::absolute(f.local, ec);
    f.record = std::make_unique<ResumeRecord>(opts.resume_dir, abs, f.entry.size, f.mtime_ns,
                                              opts.part_size, parts.size());
    f.entry.sha256 = f.record->Sha256();
    for (size_t p = 0; p < parts.size(); ++p) {
      f.entry.parts.push_back(FilePart{parts[p].first, parts[p].second, f.record->Part(p)});
      plan.tasks.push_back({i, p});
    }
    plan.total += f.entry.size;
  }
  return plan;
}

// The whole-file sha256 of each multi-part file not hashed by an earlier run, recorded as it
// goes; run on its own thread while parts go out. Gives up when `stop` is set.
std::optional<Error> HashMultipartFiles(std::vector<LocalFile>& files,
                                        const std::atomic<bool>& stop) {
  for (auto& f : files) {
    if (f.entry.parts.size() < 2 || !f.entry.sha256.empty()) continue;
    auto h = HashWhole(f.fd.fd(), f.entry.size, stop);
    if (!h) return MakeError(h.error().code, f.local.string() + ": " + h.error().message);
    f.entry.sha256 = *h;
    f.record->SetSha256(*h);
  }
  return std::nullopt;
}

// Whether the registry already has the part a recorded digest names, at its length.
Result<bool> AlreadyPushed(OciClient& client, const std::string& repo, const FilePart& part,
                           const std::string& label) {
  if (part.digest.empty()) return false;
  auto have = client.BlobSize(repo, part.digest);
  if (!have) return MakeError(have.error().code, label + ": " + have.error().message);
  return *have && **have == part.length;
}

// Pushes the bytes of `part` of `f` as a blob; returns its digest.
Result<std::string> SendPart(OciClient& client, const std::string& repo, const LocalFile& f,
                             const FilePart& part, const std::string& label,
                             const OciPushOptions& opts) {
  if (part.length == 0) {
    HANGAR_TRY(client.PushBlobBytes(repo, kEmptyBlobDigest, ""));
    return kEmptyBlobDigest;
  }
  int fd = f.fd.fd();
  auto d = client.PushBlobStreamed(
      repo, [&] { return std::make_unique<FileRangeSource>(fd, part.offset, part.length); },
      part.length,
      [&](int64_t n) {
        if (opts.progress) opts.progress->Add(n);
      });
  if (!d) return MakeError(d.error().code, label + ": " + d.error().message);
  return std::move(*d);
}

// Pushes part `p` of `f` unless the registry has it already, and records its digest.
Result<void> PushPart(OciClient& client, const std::string& repo, LocalFile& f, size_t p,
                      const OciPushOptions& opts, PushCounters& counters) {
  FilePart& part = f.entry.parts[p];
  std::string label =
      f.entry.path + " part " + std::to_string(p + 1) + "/" + std::to_string(f.entry.parts.size());
  HANGAR_ASSIGN_OR_RETURN(bool have, AlreadyPushed(client, repo, part, label));
  if (have) {
    Note(opts.log, "skip " + label + " " + part.digest + " (already in the registry)");
    if (opts.progress) opts.progress->Add(static_cast<int64_t>(part.length));
    counters.skipped.fetch_add(1);
    return {};
  }
  HANGAR_ASSIGN_OR_RETURN(std::string digest, SendPart(client, repo, f, part, label, opts));
  Note(opts.log, "sent " + label + " " + digest);
  part.digest = digest;
  if (f.entry.parts.size() == 1) f.entry.sha256 = digest.substr(7);  // the part is the file
  f.record->SetPart(p, digest);
  counters.sent.fetch_add(1);
  counters.bytes.fetch_add(part.length);
  return {};
}

// The empty config blob unless the registry has it, then the manifest listing `files`
// under `tag`; returns the manifest's digest.
Result<std::string> PushManifest(OciClient& client, const std::string& repo, const std::string& tag,
                                 std::vector<LocalFile>& files, const OciPushOptions& opts) {
  HANGAR_ASSIGN_OR_RETURN(auto config, client.BlobSize(repo, kEmptyConfigDigest));
  if (!config) HANGAR_TRY(client.PushBlobBytes(repo, kEmptyConfigDigest, "{}"));
  std::vector<FileEntry> entries;
  for (auto& f : files) entries.push_back(std::move(f.entry));
  std::string manifest = BuildManifest(entries, opts.annotations, Rfc3339Now());
  return client.PutManifest(repo, tag, kOciManifestType, manifest);
}

}  // namespace

fs::path DefaultOciResumeDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return fs::path(xdg) / "hangar" / "oci-push";
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache" / "hangar" /
         "oci-push";
}

Result<OciPushResult> OciPush(OciClient& client, const OciRef& ref, const OciPushOptions& opts) {
  if (!ref.digest.empty()) {
    return MakeError(ErrorCode::BadRequest, "push needs a tag, not a digest, in the reference");
  }
  if (opts.part_size == 0) return MakeError(ErrorCode::BadRequest, "part size must be > 0");
  HANGAR_ASSIGN_OR_RETURN(auto files, Collect(opts.paths));
  const std::string& repo = ref.repository;
  HANGAR_TRY(client.Check(repo, true));
  HANGAR_ASSIGN_OR_RETURN(auto plan, PlanPush(files, opts));

  // The whole-file sha256 of multi-part files when asked for, on its own thread while
  // parts go out.
  std::atomic<bool> stop{false};
  std::optional<Error> hash_error;
  std::thread hasher([&] {
    if (opts.file_sha256) hash_error = HashMultipartFiles(files, stop);
  });

  OciPushResult result;
  result.files = files.size();
  result.parts = plan.tasks.size();
  PushCounters counters;
  if (opts.progress) opts.progress->Start("pushing", plan.total);
  auto pushed = RunParallel(plan.tasks.size(), opts.workers, [&](size_t t) -> Result<void> {
    const PushTask& task = plan.tasks[t];
    return PushPart(client, repo, files[task.file], task.part, opts, counters);
  });
  if (!pushed) stop.store(true);
  hasher.join();
  if (opts.progress) opts.progress->Finish();
  if (!pushed) return std::move(pushed).error();
  if (hash_error) return *hash_error;

  HANGAR_ASSIGN_OR_RETURN(result.manifest_digest, PushManifest(client, repo, ref.tag, files, opts));
  result.parts_sent = counters.sent.load();
  result.parts_skipped = counters.skipped.load();
  result.bytes_sent = counters.bytes.load();
  return result;
}

}  // namespace hangar::client

#include "client/downloader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>

#include "client/file_io.h"
#include "client/parallel.h"
#include "core/repo_path.h"

namespace hangar::client {

namespace fs = std::filesystem;

namespace {

constexpr int kTries = 3;
constexpr std::string_view kSidecarMagic = "hangar-download-parts 1";

// One file being fetched, shared by the workers fetching its parts.
struct Target {
  TreeFile entry;
  fs::path dest, temp, sidecar;
  ContentHasher::Kind kind = ContentHasher::Kind::Sha256;
  std::string expected;  // hex digest from the tree
  bool multipart = false;
  uint64_t part_size = 0;
  uint64_t part_count = 1;

  File fd;          // the .incomplete file (multipart)
  File sidecar_fd;  // O_APPEND
  std::mutex mu;
  std::vector<bool> done;  // [1..part_count]
  uint64_t cursor = 1;     // next part to hash, in order
  bool hashing = false;
  bool finalized = false;
  std::unique_ptr<ContentHasher> hasher;

  uint64_t PartOffset(uint64_t n) const { return (n - 1) * part_size; }
  uint64_t PartBytes(uint64_t n) const {
    return n < part_count ? part_size : entry.size - part_size * (part_count - 1);
  }
};

struct Task {
  Target* target;
  uint64_t part;  // 0 for a single-request file
};

Error SysError(const std::string& what) {
  return MakeError(ErrorCode::Internal, what + ": " + std::strerror(errno));
}

Result<void> WriteAll(int fd, const char* p, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return SysError("write");
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return {};
}

bool Selected(const std::string& path, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return true;
  for (const auto& w : wanted) {
    if (path == w || (path.size() > w.size() && path.starts_with(w) && path[w.size()] == '/')) {
      return true;
    }
  }
  return false;
}

std::string SidecarHeader(const Target& t) {
  return std::string(kSidecarMagic) + " " + t.expected + " " + std::to_string(t.entry.size) + " " +
         std::to_string(t.part_size) + "\n";
}

// Opens the .incomplete file and its sidecar, keeping the parts an earlier run finished when
// the sidecar describes the same object and part size.
Result<void> PrepareMultipart(Target& t) {
  HANGAR_ASSIGN_OR_RETURN(auto fd, File::Open(t.temp, O_RDWR | O_CREAT));
  t.fd = std::move(fd);
  t.done.assign(t.part_count + 1, false);
  bool reuse = false;
  {
    std::ifstream in(t.sidecar);
    std::string header;
    auto size = t.fd.Size();
    if (in && std::getline(in, header) && header + "\n" == SidecarHeader(t) && size &&
        *size == t.entry.size) {
      reuse = true;
      std::string line;
      while (std::getline(in, line)) {
        char* end = nullptr;
        uint64_t n = std::strtoull(line.c_str(), &end, 10);
        if (end != nullptr && *end == '\0' && n >= 1 && n <= t.part_count) t.done[n] = true;
      }
    }
  }
  if (!reuse) {
    if (::ftruncate(t.fd.fd(), 0) != 0 ||
        ::ftruncate(t.fd.fd(), static_cast<off_t>(t.entry.size)) != 0) {
      return SysError("truncate " + t.temp.string());
    }
    HANGAR_ASSIGN_OR_RETURN(auto sc, File::Open(t.sidecar, O_WRONLY | O_CREAT | O_TRUNC));
    std::string header = SidecarHeader(t);
    HANGAR_TRY(WriteAll(sc.fd(), header.data(), header.size(), 0));
  }
  HANGAR_ASSIGN_OR_RETURN(auto sc, File::Open(t.sidecar, O_WRONLY | O_APPEND));
  t.sidecar_fd = std::move(sc);
  t.hasher = std::make_unique<ContentHasher>(t.kind, t.entry.size);
  return {};
}

Result<void> Finalize(Target& t, const std::string& got) {
  if (got != t.expected) {
    ::unlink(t.temp.c_str());
    if (t.multipart) ::unlink(t.sidecar.c_str());
    return MakeError(ErrorCode::DigestInvalid,
                     t.entry.path + ": downloaded bytes do not match the repo's " +
                         (t.kind == ContentHasher::Kind::Sha256 ? "sha256 " : "blob oid ") +
                         t.expected + " (got " + got + "); the partial file was removed");
  }
  if (::rename(t.temp.c_str(), t.dest.c_str()) != 0)
    return SysError("rename to " + t.dest.string());
  if (t.multipart) ::unlink(t.sidecar.c_str());
  return {};
}

// Hashes finished parts in order, as far as they go; the worker that hashes the last part
// renames the file into place. Only one worker hashes a file at a time.
Result<void> Advance(Target& t) {
  std::unique_lock lock(t.mu);
  if (t.hashing || t.finalized) return {};
  t.hashing = true;
  while (t.cursor <= t.part_count && t.done[t.cursor]) {
    uint64_t n = t.cursor;
    lock.unlock();
    auto r = HashRange(t.fd.fd(), t.PartOffset(n), t.PartBytes(n), *t.hasher);
    lock.lock();
    if (!r) {
      t.hashing = false;
      return MakeError(r.error().code, t.temp.string() + ": " + r.error().message);
    }
    ++t.cursor;
  }
  t.hashing = false;
  if (t.cursor <= t.part_count) return {};
  t.finalized = true;
  lock.unlock();
  return Finalize(t, t.hasher->FinishHex());
}

Result<void> FetchPart(const HubClient& hub, const RepoRef& repo, const std::string& commit,
                       Target& t, uint64_t n, Progress* progress) {
  uint64_t offset = t.PartOffset(n), length = t.PartBytes(n);
  auto r = WithRetries(kTries, Retryable, [&]() -> Result<void> {
    uint64_t written = 0;
    bool overflow = false;
    net::BodySink sink = [&](std::span<const char> data) -> Result<void> {
      if (written + data.size() > length) {
        overflow = true;  // an error body or a server ignoring Range: never past the part
        return {};
      }
      HANGAR_TRY(WriteAll(t.fd.fd(), data.data(), data.size(), offset + written));
      written += data.size();
      if (progress) progress->Add(static_cast<int64_t>(data.size()));
      return {};
    };
    auto got = hub.GetFile(repo, commit, t.entry.path, offset, length, sink);
    if (!got || overflow || written != length) {
      if (progress) progress->Add(-static_cast<int64_t>(written));
      if (!got) return got;
      return MakeError(ErrorCode::Unavailable, t.entry.path + ": part " + std::to_string(n) +
                                                   " came back with a wrong length");
    }
    return {};
  });
  if (!r) return r;
  std::string line = std::to_string(n) + "\n";
  {
    std::lock_guard lock(t.mu);
    HANGAR_TRY(WriteAll(t.sidecar_fd.fd(), line.data(), line.size(), 0));  // O_APPEND
    t.done[n] = true;
  }
  return Advance(t);
}

Result<void> FetchWhole(const HubClient& hub, const RepoRef& repo, const std::string& commit,
                        Target& t, Progress* progress) {
  return WithRetries(kTries, Retryable, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto fd, File::Open(t.temp, O_WRONLY | O_CREAT | O_TRUNC));
    ContentHasher h(t.kind, t.entry.size);
    uint64_t written = 0;
    bool overflow = false;
    net::BodySink sink = [&](std::span<const char> data) -> Result<void> {
      if (written + data.size() > t.entry.size) {
        overflow = true;
        return {};
      }
      HANGAR_TRY(WriteAll(fd.fd(), data.data(), data.size(), written));
      h.Update(data.data(), data.size());
      written += data.size();
      if (progress) progress->Add(static_cast<int64_t>(data.size()));
      return {};
    };
    auto got = hub.GetFile(repo, commit, t.entry.path, 0, 0, sink);
    if (!got || overflow || written != t.entry.size) {
      if (progress) progress->Add(-static_cast<int64_t>(written));
      ::unlink(t.temp.c_str());
      if (!got) return got;
      return MakeError(ErrorCode::Unavailable, t.entry.path + ": the server sent " +
                                                   (overflow ? "more" : "fewer") +
                                                   " bytes than the tree lists");
    }
    return Finalize(t, h.FinishHex());
  });
}

// The paths asked for, trailing slashes and leading "./" dropped; each must name a file or
// a directory of the listing.
Result<std::vector<std::string>> WantedPaths(const std::vector<std::string>& paths,
                                             const std::vector<TreeFile>& listed,
                                             const RepoRef& repo, const std::string& revision,
                                             const std::string& commit) {
  std::vector<std::string> wanted;
  for (auto p : paths) {
    while (!p.empty() && p.back() == '/') p.pop_back();
    while (p.starts_with("./")) p.erase(0, 2);
    wanted.push_back(p);
  }
  for (const auto& w : wanted) {
    bool any = false;
    for (const auto& f : listed) any = any || Selected(f.path, {w});
    if (!any) {
      return MakeError(ErrorCode::EntryNotFound, "'" + w + "' not found in " + repo.Id() + " at " +
                                                     revision + " (" + commit + ")");
    }
  }
  return wanted;
}

// The target for listed file `f` under `local_dir`: its paths and the digest to check.
std::unique_ptr<Target> MakeTarget(const TreeFile& f, const fs::path& local_dir) {
  auto t = std::make_unique<Target>();
  t->entry = f;
  t->dest = local_dir / f.path;
  t->temp = t->dest;
  t->temp += ".incomplete";
  t->sidecar = t->dest;
  t->sidecar += ".incomplete.parts";
  bool lfs = !f.lfs_sha256.empty();
  t->kind = lfs ? ContentHasher::Kind::Sha256 : ContentHasher::Kind::GitBlob;
  t->expected = lfs ? f.lfs_sha256 : f.oid;
  return t;
}

// Whether the target's destination already holds the expected bytes.
bool AlreadyPresent(const Target& t) {
  std::error_code ec;
  if (fs::is_regular_file(t.dest, ec) && fs::file_size(t.dest, ec) == t.entry.size && !ec) {
    auto have = HashFile(t.dest, t.kind, t.entry.size);
    return have && *have == t.expected;
  }
  return false;
}

// The files to fetch and the requests that fetch them: one per small file, one per part
// not finished by an earlier run for a large one.
struct Plan {
  std::vector<std::unique_ptr<Target>> targets;
  std::vector<Task> tasks;
  uint64_t bytes = 0;  // what the tasks fetch in all
  size_t skipped = 0;  // files present and correct already
};

// Plans the download of the selected files, keeping those present and correct already.
Result<Plan> PlanDownload(const std::vector<TreeFile>& listed,
                          const std::vector<std::string>& wanted, const DownloadOptions& opts) {
  Plan plan;
  std::error_code ec;
  for (const auto& f : listed) {
    if (!Selected(f.path, wanted)) continue;
    // Paths come from the server: none may leave the target directory or name a .git in
    // it (the repo path rules, core/repo_path.h).
    if (auto ok = ValidateReadPath(f.path); !ok) {
      return MakeError(ErrorCode::Internal,
                       "the server listed an unsafe path: " + ok.error().message);
    }
    auto t = MakeTarget(f, opts.local_dir);
    if (AlreadyPresent(*t)) {
      ++plan.skipped;
      continue;
    }
    fs::create_directories(t->dest.parent_path(), ec);
    if (ec)
      return MakeError(ErrorCode::Internal,
                       "cannot create " + t->dest.parent_path().string() + ": " + ec.message());
    t->multipart = f.size > 0 && f.size >= opts.part_size;
    if (t->multipart) {
      t->part_size = opts.part_size;
      t->part_count = (f.size + opts.part_size - 1) / opts.part_size;
      HANGAR_TRY(PrepareMultipart(*t));
      for (uint64_t n = 1; n <= t->part_count; ++n) {
        if (t->done[n]) continue;
        plan.tasks.push_back({t.get(), n});
        plan.bytes += t->PartBytes(n);
      }
    } else {
      plan.tasks.push_back({t.get(), 0});
      plan.bytes += f.size;
    }
    plan.targets.push_back(std::move(t));
  }
  return plan;
}

// Checks and renames into place the files whose parts were all fetched by an earlier run.
Result<void> FinishFetchedEarlier(const std::vector<std::unique_ptr<Target>>& targets) {
  for (auto& t : targets) {
    if (t->multipart) {
      bool all = true;
      for (uint64_t n = 1; n <= t->part_count; ++n) all = all && t->done[n];
      if (all) HANGAR_TRY(Advance(*t));
    }
  }
  return {};
}

}  // namespace

Result<DownloadResult> Download(const HubClient& hub, const RepoRef& repo,
                                const DownloadOptions& opts) {
  DownloadResult result;
  HANGAR_ASSIGN_OR_RETURN(auto commit, hub.ResolveCommit(repo, opts.revision));
  result.commit = commit;
  HANGAR_ASSIGN_OR_RETURN(auto listed, hub.ListFiles(repo, commit));
  HANGAR_ASSIGN_OR_RETURN(auto wanted,
                          WantedPaths(opts.paths, listed, repo, opts.revision, commit));
  HANGAR_ASSIGN_OR_RETURN(auto plan, PlanDownload(listed, wanted, opts));
  result.skipped = plan.skipped;
  HANGAR_TRY(FinishFetchedEarlier(plan.targets));

  if (opts.progress && !plan.tasks.empty()) opts.progress->Start("downloading", plan.bytes);
  HANGAR_TRY(RunParallel(plan.tasks.size(), opts.workers, [&](size_t i) -> Result<void> {
    Task& task = plan.tasks[i];
    if (task.part == 0) return FetchWhole(hub, repo, commit, *task.target, opts.progress);
    return FetchPart(hub, repo, commit, *task.target, task.part, opts.progress);
  }));
  if (opts.progress) opts.progress->Finish();
  result.files = plan.targets.size();
  result.bytes = plan.bytes;
  return result;
}

}  // namespace hangar::client

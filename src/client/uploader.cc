#include "client/uploader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "client/file_io.h"
#include "client/parallel.h"

namespace hangar::client {

namespace fs = std::filesystem;

namespace {

constexpr size_t kSampleBytes = 512;  // what preupload looks at (hf-api.md §7.1)
constexpr int kPartTries = 3;

struct LocalFile {
  fs::path local;
  std::string repo_path;
  uint64_t size = 0;
  std::string sha256;
  std::string sample;
  std::optional<bool> lfs;  // nullopt: the server says to ignore it
  UploadSession session;
  uint64_t part_size = 0;                // the size part_sha256 was computed for
  std::vector<std::string> part_sha256;  // X-Part-Sha256 of each part, when precomputed
};

// `prefix` (PATH_IN_REPO, slashes at either end dropped; "." = the root) joined with `rel`.
std::string JoinRepoPath(std::string prefix, const std::string& rel) {
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
  if (prefix.empty() || prefix == ".") return rel;
  if (rel.empty()) return prefix;
  return prefix + "/" + rel;
}

Result<std::vector<LocalFile>> Collect(const UploadOptions& opts) {
  std::vector<LocalFile> files;
  std::error_code ec;
  auto st = fs::status(opts.local_path, ec);
  if (ec || !fs::exists(st)) {
    return MakeError(ErrorCode::NotFound, "no such file or directory: " + opts.local_path.string());
  }
  if (fs::is_regular_file(st)) {
    LocalFile f;
    f.local = opts.local_path;
    f.repo_path = opts.path_in_repo.empty() ? opts.local_path.filename().string()
                                            : JoinRepoPath(opts.path_in_repo, "");
    if (f.repo_path.empty()) f.repo_path = opts.local_path.filename().string();
    files.push_back(std::move(f));
  } else if (fs::is_directory(st)) {
    fs::recursive_directory_iterator it(opts.local_path, ec), end;
    if (ec)
      return MakeError(ErrorCode::Internal,
                       "cannot list " + opts.local_path.string() + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
      if (ec)
        return MakeError(ErrorCode::Internal,
                         "cannot list " + opts.local_path.string() + ": " + ec.message());
      if (it->is_directory() && it->path().filename() == ".git") {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      LocalFile f;
      f.local = it->path();
      f.repo_path = JoinRepoPath(opts.path_in_repo,
                                 it->path().lexically_relative(opts.local_path).generic_string());
      files.push_back(std::move(f));
    }
  } else {
    return MakeError(ErrorCode::BadRequest,
                     opts.local_path.string() + " is neither a file nor a directory");
  }
  std::sort(files.begin(), files.end(),
            [](const LocalFile& a, const LocalFile& b) { return a.repo_path < b.repo_path; });
  for (auto& f : files) {
    auto size = fs::file_size(f.local, ec);
    if (ec)
      return MakeError(ErrorCode::Internal,
                       "cannot stat " + f.local.string() + ": " + ec.message());
    f.size = size;
  }
  return files;
}

// The sha256 of each `part_size` part of `fd`, for the X-Part-Sha256 headers.
Result<std::vector<std::string>> PartDigests(int fd, uint64_t size, uint64_t part_size) {
  std::vector<std::string> out;
  for (uint64_t off = 0; off < size; off += part_size) {
    uint64_t len = std::min(part_size, size - off);
    ContentHasher h(ContentHasher::Kind::Sha256, len);
    HANGAR_TRY(HashRange(fd, off, len, h));
    out.push_back(h.FinishHex());
  }
  return out;
}

// sha256 and the preupload sample of one file, streamed. A file of several parts also gets
// its parts' digests for `part_size` (the size the server will most likely choose), on a
// second thread: the whole-file hash is sequential, so this uses the other core now rather
// than the workers' time later.
Result<void> Inspect(LocalFile& f, uint64_t part_size, Progress* progress) {
  HANGAR_ASSIGN_OR_RETURN(auto file, File::Open(f.local, O_RDONLY));
  ::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_SEQUENTIAL);
  f.sample.resize(static_cast<size_t>(std::min<uint64_t>(kSampleBytes, f.size)));
  if (!f.sample.empty() && ::pread(file.fd(), f.sample.data(), f.sample.size(), 0) !=
                               static_cast<ssize_t>(f.sample.size())) {
    return MakeError(ErrorCode::Internal, "cannot read " + f.local.string());
  }
  std::optional<Result<std::vector<std::string>>> parts;
  std::thread part_thread;
  if (f.size > part_size) {
    part_thread = std::thread([&] { parts = PartDigests(file.fd(), f.size, part_size); });
  }
  ContentHasher h(ContentHasher::Kind::Sha256, f.size);
  auto r = HashRange(file.fd(), 0, f.size, h, [&](size_t n) {
    if (progress) progress->Add(static_cast<int64_t>(n));
  });
  if (part_thread.joinable()) part_thread.join();
  if (!r) return MakeError(r.error().code, f.local.string() + ": " + r.error().message);
  f.sha256 = h.FinishHex();
  if (parts && *parts) {
    f.part_size = part_size;
    f.part_sha256 = std::move(**parts);
  }
  return {};
}

Result<std::string> ReadSmallFile(const LocalFile& f) {
  HANGAR_ASSIGN_OR_RETURN(auto file, File::Open(f.local, O_RDONLY));
  std::string out(f.size, '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::pread(file.fd(), out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return MakeError(ErrorCode::Internal, "cannot read " + f.local.string());
    got += static_cast<size_t>(n);
  }
  return out;
}

struct PartTask {
  size_t file;
  uint64_t number;
};

// The parts still to send, with the files they are read from.
struct PendingParts {
  std::vector<PartTask> tasks;
  std::vector<File> fds;  // by file index; open only for an upload with parts to send
  uint64_t bytes = 0;     // what the tasks send in all
  uint64_t resumed = 0;   // parts the server had already
};

// Step 1: hashes every file (files in parallel; one file is one sequential read).
Result<void> HashAll(std::vector<LocalFile>& files, const UploadOptions& opts) {
  uint64_t total = 0;
  for (const auto& f : files) total += f.size;
  if (opts.progress) opts.progress->Start("hashing", total);
  HANGAR_TRY(RunParallel(files.size(), opts.workers, [&](size_t i) {
    return Inspect(files[i], opts.part_size, opts.progress);
  }));
  if (opts.progress) opts.progress->Finish();
  return {};
}

// Step 2: asks the server which files are LFS (and which to ignore).
Result<void> MarkLfs(const HubClient& hub, const RepoRef& repo, const UploadOptions& opts,
                     std::vector<LocalFile>& files) {
  std::vector<PreuploadFile> pre;
  pre.reserve(files.size());
  for (const auto& f : files) pre.push_back({f.repo_path, f.size, f.sample});
  HANGAR_ASSIGN_OR_RETURN(auto modes, hub.Preupload(repo, opts.revision, pre));
  for (size_t i = 0; i < files.size(); ++i) files[i].lfs = modes[i];
  return {};
}

// Step 3: opens (or resumes) an upload per LFS object and lists the parts still to send.
Result<PendingParts> OpenUploads(const HubClient& hub, const RepoRef& repo,
                                 const UploadOptions& opts, std::vector<LocalFile>& files) {
  PendingParts pending;
  pending.fds.resize(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    auto& f = files[i];
    if (!f.lfs || !*f.lfs) continue;
    HANGAR_ASSIGN_OR_RETURN(auto s, hub.CreateUpload(repo, f.sha256, f.size, opts.part_size));
    f.session = std::move(s);
    if (f.session.present) continue;
    HANGAR_ASSIGN_OR_RETURN(auto fd, File::Open(f.local, O_RDONLY));
    pending.fds[i] = std::move(fd);
    std::vector<bool> stored(f.session.part_count + 1, false);
    for (uint64_t n : f.session.stored_parts) {
      if (n >= 1 && n <= f.session.part_count) stored[n] = true;
    }
    for (uint64_t n = 1; n <= f.session.part_count; ++n) {
      if (stored[n]) {
        ++pending.resumed;
        continue;
      }
      pending.tasks.push_back({i, n});
      pending.bytes += f.session.PartBytes(n);
    }
  }
  return pending;
}

// Sends part `number` of `f`, streamed from its offset in `fd`, with its X-Part-Sha256
// (precomputed by Inspect unless the server chose another part size); retried.
Result<void> SendPart(const HubClient& hub, const LocalFile& f, int fd, uint64_t number,
                      Progress* progress) {
  const auto& s = f.session;
  uint64_t offset = (number - 1) * s.part_size;
  uint64_t length = s.PartBytes(number);
  std::string part_sha;
  if (f.part_size == s.part_size && number <= f.part_sha256.size()) {
    part_sha = f.part_sha256[number - 1];
  } else {  // the server chose another part size
    ContentHasher ph(ContentHasher::Kind::Sha256, length);
    HANGAR_TRY(HashRange(fd, offset, length, ph));
    part_sha = ph.FinishHex();
  }
  auto r = WithRetries(kPartTries, Retryable, [&]() -> Result<void> {
    FileRangeSource src(fd, offset, length, [&](size_t n) {
      if (progress) progress->Add(static_cast<int64_t>(n));
    });
    auto put = hub.PutPart(s, number, src, part_sha);
    if (!put && progress) progress->Add(-static_cast<int64_t>(src.Sent()));
    return put;
  });
  if (!r) return MakeError(r.error().code, f.repo_path + ": " + r.error().message);
  return {};
}

// Step 4: sends the pending parts, `workers` at a time; returns how many were sent.
Result<uint64_t> SendParts(const HubClient& hub, const UploadOptions& opts,
                           const std::vector<LocalFile>& files, const PendingParts& pending) {
  if (opts.progress && !pending.tasks.empty()) opts.progress->Start("uploading", pending.bytes);
  std::atomic<uint64_t> sent{0};
  HANGAR_TRY(RunParallel(pending.tasks.size(), opts.workers, [&](size_t t) -> Result<void> {
    const auto& task = pending.tasks[t];
    HANGAR_TRY(
        SendPart(hub, files[task.file], pending.fds[task.file].fd(), task.number, opts.progress));
    sent.fetch_add(1);
    return {};
  }));
  if (opts.progress) opts.progress->Finish();
  return sent.load();
}

// Step 5: completes the uploads opened in step 3 (the server hashes each object once more).
Result<void> CompleteUploads(const HubClient& hub, int workers,
                             const std::vector<LocalFile>& files) {
  std::vector<size_t> open;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].lfs && *files[i].lfs && !files[i].session.present) open.push_back(i);
  }
  return RunParallel(open.size(), workers, [&](size_t k) -> Result<void> {
    auto r = hub.CompleteUpload(files[open[k]].session);
    if (!r) return MakeError(r.error().code, files[open[k]].repo_path + ": " + r.error().message);
    return {};
  });
}

// Step 6's operations: an LFS pointer or the inline content of each file not ignored.
Result<std::vector<CommitOp>> CommitOps(const std::vector<LocalFile>& files) {
  std::vector<CommitOp> ops;
  for (const auto& f : files) {
    if (!f.lfs) continue;  // shouldIgnore
    CommitOp op;
    op.path = f.repo_path;
    if (*f.lfs) {
      op.lfs = true;
      op.sha256 = f.sha256;
      op.size = f.size;
    } else {
      HANGAR_ASSIGN_OR_RETURN(auto content, ReadSmallFile(f));
      op.content = std::move(content);
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

Result<UploadResult> Upload(const HubClient& hub, const RepoRef& repo, const UploadOptions& opts) {
  UploadResult result;
  HANGAR_ASSIGN_OR_RETURN(auto collected, Collect(opts));
  std::vector<LocalFile>& files = collected;
  if (files.empty()) {
    return MakeError(ErrorCode::BadRequest, "nothing to upload in " + opts.local_path.string());
  }
  HANGAR_TRY(hub.CreateRepo(repo));
  if (opts.revision != "main") HANGAR_TRY(hub.CreateBranch(repo, opts.revision));

  HANGAR_TRY(HashAll(files, opts));
  HANGAR_TRY(MarkLfs(hub, repo, opts, files));
  HANGAR_ASSIGN_OR_RETURN(auto pending, OpenUploads(hub, repo, opts, files));
  result.parts_resumed = pending.resumed;
  HANGAR_ASSIGN_OR_RETURN(auto sent, SendParts(hub, opts, files, pending));
  result.parts_sent = sent;
  HANGAR_TRY(CompleteUploads(hub, opts.workers, files));

  // Step 6: one commit.
  HANGAR_ASSIGN_OR_RETURN(auto ops, CommitOps(files));
  result.files = ops.size();
  for (const auto& op : ops) result.lfs_files += op.lfs ? 1 : 0;
  std::string message = opts.commit_message.empty()
                            ? "Upload " + opts.local_path.string() + " with hangar"
                            : opts.commit_message;
  HANGAR_ASSIGN_OR_RETURN(auto url, hub.Commit(repo, opts.revision, message, ops));
  result.commit_url = std::move(url);
  return result;
}

}  // namespace hangar::client

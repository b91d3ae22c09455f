#include "git/search_snapshot.h"

#include <fcntl.h>
#include <regex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <vector>

#include "core/util.h"
#include "git/git2_util.h"
#include "git/history_internal.h"

namespace hangar::git {

namespace fs = std::filesystem;
using namespace internal;
using history_internal::CutUtf8;

namespace {

constexpr std::string_view kMagic = "HANGAR-SEARCH-2\n";
constexpr std::string_view kEnd = "HANGAR-SEARCH-END";  // then u64 file count
constexpr size_t kTrailer = kEnd.size() + 8;
// Lines longer than these are left to git grep (a killable child): glibc's regex costs up
// to length² per line, and a literal up to length × pattern length.
constexpr size_t kMaxRegexLine = 16 << 10;
constexpr size_t kMaxLiteralLine = 1 << 20;
constexpr size_t kBinaryProbe = 8000;  // git's buffer_is_binary looks this far for a NUL

std::string SnapshotDir(const std::string& repo) { return repo + "/hangar-search"; }
std::string SnapshotPath(const std::string& repo, const Oid& tree) {
  return SnapshotDir(repo) + "/" + tree.Hex() + ".snap";
}

Result<Oid> TreeOf(git_repository* repo, const Oid& commit) {
  git_oid id = ToGit(commit);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &id);
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
    return MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: " + commit.Hex());
  if (rc != 0) return Git2Error(rc, "reading commit " + commit.Hex());
  CommitPtr c(raw);
  return FromGit(git_commit_tree_id(c.get()));
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// Appends every text blob below `tree` (prefix `dir`) to `out`, in tree order.
struct Writer {
  git_repository* repo;
  const SnapshotLimits& limits;
  int fd;
  std::string buffer;
  uint64_t files = 0, bytes = 0;
  bool over = false;
  std::optional<Error> error;

  bool Flush() {
    for (size_t done = 0; done < buffer.size();) {
      ssize_t n = ::write(fd, buffer.data() + done, buffer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = MakeError(ErrorCode::Internal,
                          std::string("writing a search snapshot: ") + std::strerror(errno));
        return false;
      }
      done += static_cast<size_t>(n);
    }
    buffer.clear();
    return true;
  }

  // git_tree_walk callback: 0 continues, 1 skips a subtree, < 0 stops.
  int Visit(const char* root, const git_tree_entry* entry) {
    const git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE)
      return 0;  // trees are entered by the walk; git grep skips symlinks and gitlinks
    git_blob* raw = nullptr;
    int rc = git_blob_lookup(&raw, repo, git_tree_entry_id(entry));
    if (rc != 0) {
      error = Git2Error(rc, "reading a blob for the search snapshot");
      return -1;
    }
    Git2Ptr<git_blob, git_blob_free> blob(raw);
    const char* content = static_cast<const char*>(git_blob_rawcontent(blob.get()));
    const uint64_t size = static_cast<uint64_t>(git_blob_rawsize(blob.get()));
    if (std::memchr(content, 0, std::min<uint64_t>(size, kBinaryProbe))) return 0;
    if (++files > limits.max_files || (bytes += size) > limits.max_bytes) {
      over = true;
      return -1;
    }
    const std::string path = std::string(root) + git_tree_entry_name(entry);
    PutLe(buffer, path.size(), 4);
    buffer += path;
    PutLe(buffer, size, 8);
    if (buffer.size() + size > (4u << 20) && !Flush()) return -1;
    if (size > (4u << 20)) {
      buffer.assign(content, size);
      if (!Flush()) return -1;
    } else {
      buffer.append(content, size);
    }
    return 0;
  }
};

int VisitEntry(const char* root, const git_tree_entry* entry, void* payload) {
  return static_cast<Writer*>(payload)->Visit(root, entry);
}

// Removes all but the newest kKeptSnapshots snapshots (and stale temporaries) of a repo.
void Prune(const std::string& dir) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto when = it->last_write_time(ec);
    if (!ec) found.emplace_back(when, it->path());
  }
  std::sort(found.begin(), found.end(), std::greater<>());
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (size_t i = 0; i < found.size(); ++i) {
    const bool temporary = found[i].second.extension() != ".snap";
    if (temporary ? found[i].first < old : i >= kKeptSnapshots) fs::remove(found[i].second, ec);
  }
}

Result<void> Write(git_repository* repo, const Oid& tree_id, const std::string& path,
                   const SnapshotLimits& limits) {
  git_oid id = ToGit(tree_id);
  git_tree* raw = nullptr;
  int rc = git_tree_lookup(&raw, repo, &id);
  if (rc != 0) return Git2Error(rc, "reading tree " + tree_id.Hex());
  TreePtr tree(raw);
  const std::string dir = fs::path(path).parent_path().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return MakeError(ErrorCode::Internal, "creating " + dir + ": " + ec.message());
  std::random_device rd;
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return MakeError(ErrorCode::Internal, "creating " + tmp + ": " + std::strerror(errno));
  Writer w{repo, limits, fd, std::string(kMagic), 0, 0, false, std::nullopt};
  rc = git_tree_walk(tree.get(), GIT_TREEWALK_PRE, VisitEntry, &w);
  // The trailer lets a reader tell a complete file from one cut at an entry boundary;
  // fsync before the rename, so a crash cannot leave a short file under the final name.
  w.buffer += kEnd;
  PutLe(w.buffer, w.files, 8);
  bool ok = !w.over && !w.error && rc == 0 && w.Flush() && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    w.error = MakeError(ErrorCode::Internal, "renaming " + tmp + ": " + std::strerror(errno));
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    if (w.over)
      return MakeError(ErrorCode::Unavailable,
                       "the tree holds more text than a search "
                       "snapshot takes");
    if (w.error) return *w.error;
    return Git2Error(rc, "walking tree " + tree_id.Hex());
  }
  Prune(dir);
  return {};
}

// Case-insensitive (ASCII) search for `needle` in [from, end) of `hay`; npos when absent.
size_t FindFolded(std::string_view hay, size_t from, std::string_view needle) {
  auto fold = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
  auto it = std::search(hay.begin() + from, hay.end(), needle.begin(), needle.end(),
                        [&](char a, char b) { return fold(a) == fold(b); });
  return it == hay.end() ? std::string_view::npos : size_t(it - hay.begin());
}

// Whether `pattern` holds a backreference, \1 to \9 (an escaped backslash is none).
bool HasBackreference(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '\\' && pattern[i + 1] >= '1' && pattern[i + 1] <= '9') return true;
    if (pattern[i] == '\\') ++i;
  }
  return false;
}

// Whether `path` is the file or directory `scope` or below it; "" is the whole tree.
bool InScope(std::string_view path, std::string_view scope) {
  return scope.empty() || path == scope ||
         (path.starts_with(scope) && path.size() > scope.size() && path[scope.size()] == '/');
}

// The pattern of one search, matched against one line as git grep matches it: a POSIX
// extended regex (REG_NEWLINE, REG_ICASE for ignore_case) or a literal, folded for
// ignore_case. Compile before matching; not copyable (it owns the compiled regex).
class LineMatcher {
 public:
  LineMatcher(std::string_view pattern, const GrepOptions& options)
      : pattern_(pattern), options_(options) {}
  ~LineMatcher() {
    if (re_) ::regfree(&*re_);
  }
  LineMatcher(const LineMatcher&) = delete;
  LineMatcher& operator=(const LineMatcher&) = delete;

  // Compiles a regex pattern (a literal needs nothing). Errors: BadRequest, with glibc's
  // message.
  Result<void> Compile() {
    if (options_.fixed_string) return {};
    const std::string p(pattern_);
    re_.emplace();
    int flags = REG_EXTENDED | REG_NEWLINE | (options_.ignore_case ? REG_ICASE : 0);
    if (int rc = ::regcomp(&*re_, p.c_str(), flags); rc != 0) {
      char msg[256];
      ::regerror(rc, &*re_, msg, sizeof msg);
      re_.reset();
      return MakeError(ErrorCode::BadRequest, std::string("invalid search pattern: ") + msg);
    }
    return {};
  }

  bool is_regex() const { return re_.has_value(); }
  // The longest line this matcher takes; longer ones are left to git grep.
  size_t max_line() const { return re_ ? kMaxRegexLine : kMaxLiteralLine; }

  // Whether the pattern matches within [b, e) of `text`: one line, as git grep matches.
  bool Matches(std::string_view text, size_t b, size_t e) const {
    if (re_) {  // the line is the whole string: ^ and \` match at its start, as in git
      regmatch_t m[1];
      m[0].rm_so = 0;
      m[0].rm_eo = static_cast<regoff_t>(e - b);
      return ::regexec(&*re_, text.data() + b, 1, m, REG_STARTEND) == 0;
    }
    std::string_view line = text.substr(b, e - b);
    return (options_.ignore_case ? FindFolded(line, 0, pattern_) : line.find(pattern_)) !=
           std::string_view::npos;
  }

 private:
  const std::string_view pattern_;
  const GrepOptions& options_;
  std::optional<regex_t> re_;
};

// One search's walk over the snapshot's files, one ScanFile call per file in scope: the
// matches so far, and the bytes scanned since the deadline was last checked.
class FileSearch {
 public:
  enum class Outcome {
    Continue,     // on to the next file
    Full,         // max_matches reached; the result is truncated
    LineTooLong,  // a line over the matcher's max_line: git grep answers instead
  };

  FileSearch(const LineMatcher& matcher, const GrepOptions& options,
             std::chrono::steady_clock::time_point deadline)
      : matcher_(matcher), options_(options), deadline_(deadline) {}

  // Adds the matching lines of file `path`, content `text`. Errors: Unavailable (past the
  // deadline).
  Result<Outcome> ScanFile(std::string_view path, std::string_view text) {
    uint32_t line = 0;
    bool last_hit = false;
    for (size_t b = 0; b < text.size();) {
      size_t e = text.find('\n', b);
      if (e == std::string_view::npos) e = text.size();
      ++line;
      if (e - b > matcher_.max_line()) return Outcome::LineTooLong;
      HANGAR_TRY(CheckDeadline(e - b));
      last_hit = matcher_.Matches(text, b, e);
      if (last_hit) {
        std::string_view whole = text.substr(b, e - b);
        std::string_view kept = CutUtf8(whole, options_.max_line_bytes);
        if (!Add(GrepMatch{std::string(path), line, std::string(kept), kept.size() < whole.size()}))
          return Outcome::Full;
      }
      b = e + 1;
    }
    // git grep's look-ahead also finds an empty match after the final newline, and lists
    // it as one more, empty line (`^$` in "a\n" gives line 2) when the last line missed.
    if (matcher_.is_regex() && !last_hit && !text.empty() && text.back() == '\n' &&
        matcher_.Matches(text, text.size(), text.size())) {
      if (!Add(GrepMatch{std::string(path), line + 1, "", false})) return Outcome::Full;
    }
    return Outcome::Continue;
  }

  GrepResult TakeResult() { return std::move(result_); }

 private:
  // Counts a line of `line_bytes` as scanned; every MiB or so, fails past the deadline.
  Result<void> CheckDeadline(size_t line_bytes) {
    checked_ += line_bytes + 64;
    if (checked_ > (1 << 20)) {
      checked_ = 0;
      if (std::chrono::steady_clock::now() > deadline_)
        return MakeError(ErrorCode::Unavailable,
                         "the search took too long; narrow the pattern or the path");
    }
    return {};
  }

  // Keeps `match`; false (and the result marked truncated) when max_matches are kept.
  bool Add(GrepMatch match) {
    if (result_.matches.size() == options_.max_matches) {
      result_.truncated = true;
      return false;
    }
    result_.matches.push_back(std::move(match));
    return true;
  }

  const LineMatcher& matcher_;
  const GrepOptions& options_;
  const std::chrono::steady_clock::time_point deadline_;
  GrepResult result_;
  uint64_t checked_ = 0;
};

}  // namespace

SearchSnapshot::~SearchSnapshot() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

Result<std::unique_ptr<SearchSnapshot>> SearchSnapshot::Map(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::unique_ptr<SearchSnapshot>();
    return MakeError(ErrorCode::Internal, "opening " + path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return MakeError(ErrorCode::Internal, "reading " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<SearchSnapshot> snap(new SearchSnapshot);
  snap->size_ = static_cast<size_t>(st.st_size);
  void* p = snap->size_ ? ::mmap(nullptr, snap->size_, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (p == MAP_FAILED) return MakeError(ErrorCode::Internal, "mapping " + path);
  snap->data_ = static_cast<const char*>(p);
  // Check the framing once, so Search can trust it.
  std::string_view all(snap->data_, snap->size_);
  bool ok = all.size() >= kMagic.size() + kTrailer && all.starts_with(kMagic) &&
            all.substr(all.size() - kTrailer, kEnd.size()) == kEnd;
  const size_t body_end = ok ? all.size() - kTrailer : 0;
  for (size_t at = kMagic.size(); ok && at < body_end;) {
    if (body_end - at < 4) {
      ok = false;
      break;
    }
    const uint64_t name = GetLe(all.data() + at, 4);
    at += 4;
    if (body_end - at < name + 8) {
      ok = false;
      break;
    }
    at += name;
    const uint64_t size = GetLe(all.data() + at, 8);
    at += 8;
    if (body_end - at < size) {
      ok = false;
      break;
    }
    at += size;
    ++snap->files_;
    snap->bytes_ += size;
  }
  ok = ok && GetLe(all.data() + body_end + kEnd.size(), 8) == snap->files_;
  snap->body_end_ = body_end;
  if (!ok) {
    std::error_code ec;
    fs::remove(path, ec);
    return MakeError(ErrorCode::Internal, "search snapshot " + path + " is malformed; removed");
  }
  return snap;
}

Result<std::unique_ptr<SearchSnapshot>> SearchSnapshot::OpenExisting(const std::string& repo,
                                                                     const Oid& commit) {
  HANGAR_ASSIGN_OR_RETURN(git_repository * handle, OpenCached(repo));
  HANGAR_ASSIGN_OR_RETURN(Oid tree, TreeOf(handle, commit));
  return Map(SnapshotPath(repo, tree));
}

Result<std::unique_ptr<SearchSnapshot>> SearchSnapshot::Open(const std::string& repo,
                                                             const Oid& commit,
                                                             const SnapshotLimits& limits) {
  HANGAR_ASSIGN_OR_RETURN(git_repository * handle, OpenCached(repo));
  HANGAR_ASSIGN_OR_RETURN(Oid tree, TreeOf(handle, commit));
  const std::string path = SnapshotPath(repo, tree);
  HANGAR_ASSIGN_OR_RETURN(auto snap, Map(path));
  if (snap) return snap;
  HANGAR_TRY(Write(handle, tree, path, limits));
  HANGAR_ASSIGN_OR_RETURN(snap, Map(path));
  if (!snap) return MakeError(ErrorCode::Internal, "search snapshot " + path + " vanished");
  return snap;
}

Result<std::optional<GrepResult>> SearchSnapshot::Search(
    std::string_view pattern, const GrepOptions& options,
    std::chrono::steady_clock::time_point deadline) const {
  using Answer = std::optional<GrepResult>;
  // Backreferences make glibc's matcher exponential: git grep, killable, answers.
  if (!options.fixed_string && HasBackreference(pattern)) return Answer();
  LineMatcher matcher(pattern, options);
  HANGAR_TRY(matcher.Compile());
  std::string_view scope = options.path;
  while (scope.ends_with('/')) scope.remove_suffix(1);
  FileSearch search(matcher, options, deadline);
  std::string_view all(data_, body_end_);
  for (size_t at = kMagic.size(); at < all.size();) {
    const size_t name_len = GetLe(all.data() + at, 4);
    std::string_view path = all.substr(at + 4, name_len);
    at += 4 + name_len;
    const size_t size = GetLe(all.data() + at, 8);
    std::string_view text = all.substr(at + 8, size);
    at += 8 + size;
    if (!InScope(path, scope)) continue;
    HANGAR_ASSIGN_OR_RETURN(FileSearch::Outcome outcome, search.ScanFile(path, text));
    if (outcome == FileSearch::Outcome::LineTooLong) return Answer();
    if (outcome == FileSearch::Outcome::Full) break;
  }
  return Answer(search.TakeResult());
}

}  // namespace hangar::git

#include "git/repo_reader.h"

#include <algorithm>
#include <cstring>

#include "git/command.h"
#include "git/git2_util.h"
#include "git/tree_walk.h"

namespace hangar::git {
namespace {

using namespace internal;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// The revision as it may appear in a message (and so in an X-Error-Message header):
// control bytes replaced, length bounded.
std::string Printable(std::string_view rev) {
  std::string out;
  for (char c : rev.substr(0, 256)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out;
}

Error RevisionNotFound(std::string_view rev) {
  return MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: " + Printable(rev));
}

// The commit `oid` peels to (annotated tags followed); nullopt when it names no object or
// one that does not peel to a commit.
Result<std::optional<Oid>> PeelToCommit(git_repository* repo, const git_oid& oid) {
  git_object* raw = nullptr;
  int rc = git_object_lookup(&raw, repo, &oid, GIT_OBJECT_ANY);
  if (rc == GIT_ENOTFOUND) return std::optional<Oid>();
  if (rc != 0) return Git2Error(rc, "looking up object");
  ObjectPtr obj(raw);
  if (git_object_type(obj.get()) == GIT_OBJECT_COMMIT) return std::optional(FromGit(&oid));
  git_object* peeled_raw = nullptr;
  rc = git_object_peel(&peeled_raw, obj.get(), GIT_OBJECT_COMMIT);
  if (rc != 0) return std::optional<Oid>();  // a tag of a tree or blob: not a revision
  ObjectPtr peeled(peeled_raw);
  return std::optional(FromGit(git_object_id(peeled.get())));
}

// The commit ref `name` peels to; nullopt when there is no such (valid) ref.
Result<std::optional<Oid>> TryRef(git_repository* repo, const std::string& name) {
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, repo, name.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) return std::optional<Oid>();
  if (rc != 0) return Git2Error(rc, "resolving " + name);
  return PeelToCommit(repo, oid);
}

Result<CommitPtr> LookupCommit(git_repository* repo, const Oid& id) {
  git_oid g = ToGit(id);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &g);
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
    return MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: " + id.Hex());
  if (rc != 0) return Git2Error(rc, "reading commit " + id.Hex());
  return CommitPtr(raw);
}

Result<TreePtr> CommitTree(git_repository* repo, const Oid& commit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, LookupCommit(repo, commit));
  git_tree* raw = nullptr;
  int rc = git_commit_tree(&raw, c.get());
  if (rc != 0) return Git2Error(rc, "reading tree of " + commit.Hex());
  return TreePtr(raw);
}

Result<OdbPtr> RepoOdb(git_repository* repo) {
  git_odb* raw = nullptr;
  int rc = git_repository_odb(&raw, repo);
  if (rc != 0) return Git2Error(rc, "opening object database");
  return OdbPtr(raw);
}

// Normalizes a path inside the repo: no leading/trailing '/', no empty, "." or ".."
// components. nullopt when it cannot name an entry.
std::optional<std::string_view> CleanPath(std::string_view p) {
  while (!p.empty() && p.back() == '/') p.remove_suffix(1);
  if (p.empty()) return p;
  if (p.front() == '/' || p.find('\0') != p.npos) return std::nullopt;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == p.npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return std::nullopt;
    start = end + 1;
  }
  return p;
}

Error EntryNotFound(std::string_view path) {
  return MakeError(ErrorCode::EntryNotFound, "Entry not found: " + Printable(path));
}

CommitInfo ToCommitInfo(const git_commit* c) {
  CommitInfo info;
  info.id = FromGit(git_commit_id(c));
  unsigned int np = git_commit_parentcount(c);
  info.parents.reserve(np);
  for (unsigned int i = 0; i < np; ++i) info.parents.push_back(FromGit(git_commit_parent_id(c, i)));
  const git_signature* a = git_commit_author(c);
  const git_signature* m = git_commit_committer(c);
  info.author_name = a->name ? a->name : "";
  info.author_email = a->email ? a->email : "";
  info.author_time = a->when.time;
  info.committer_name = m->name ? m->name : "";
  info.committer_email = m->email ? m->email : "";
  info.committer_time = m->when.time;
  info.message = std::string(BoundedMessage(git_commit_message(c)));
  info.summary = info.message.substr(0, info.message.find('\n'));
  info.tree = FromGit(git_commit_tree_id(c));
  return info;
}

// A ByteSource over part of an inflated blob.
class BlobSource final : public ByteSource {
 public:
  BlobSource(OdbObjectPtr obj, size_t begin, size_t end)
      : obj_(std::move(obj)), pos_(begin), end_(end) {}
  Result<size_t> Read(std::span<char> buf) override {
    size_t n = std::min(buf.size(), end_ - pos_);
    std::memcpy(buf.data(), static_cast<const char*>(git_odb_object_data(obj_.get())) + pos_, n);
    pos_ += n;
    return n;
  }
  std::optional<uint64_t> Size() const override { return end_ - pos_; }

 private:
  OdbObjectPtr obj_;
  size_t pos_, end_;
};

Result<OdbObjectPtr> ReadBlobObject(git_repository* repo, const Oid& blob) {
  HANGAR_ASSIGN_OR_RETURN(auto odb, RepoOdb(repo));
  git_oid g = ToGit(blob);
  git_odb_object* raw = nullptr;
  int rc = git_odb_read(&raw, odb.get(), &g);
  if (rc == GIT_ENOTFOUND) return EntryNotFound(blob.Hex());
  if (rc != 0) return Git2Error(rc, "reading blob " + blob.Hex());
  OdbObjectPtr obj(raw);
  if (git_odb_object_type(obj.get()) != GIT_OBJECT_BLOB) return EntryNotFound(blob.Hex());
  return obj;
}

}  // namespace

RepoReader::RepoReader() { EnsureLibgit2(); }

Result<Oid> RepoReader::ResolveRevision(const std::string& path, std::string_view rev) {
  HANGAR_ASSIGN_OR_RETURN(auto repo_or, OpenCached(path));
  git_repository* repo = repo_or;
  if (rev.empty() || rev.size() > 1024 || rev.find("..") != rev.npos ||
      std::any_of(rev.begin(), rev.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return RevisionNotFound(rev);
  }
  auto found = [](Result<std::optional<Oid>>& r) { return !r || r->has_value(); };
  auto take = [&](Result<std::optional<Oid>>& r) -> Result<Oid> {
    if (!r) return std::move(r).error();
    return **r;
  };
  if (rev == "HEAD") {
    auto r = TryRef(repo, "HEAD");
    if (found(r)) return take(r);
    return RevisionNotFound(rev);
  }
  bool hex = IsHex(rev);
  if (hex && rev.size() == 40) {
    git_oid oid;
    git_object* raw = nullptr;
    if (git_oid_fromstrn(&oid, rev.data(), rev.size()) == 0 &&
        git_object_lookup(&raw, repo, &oid, GIT_OBJECT_COMMIT) == 0) {
      git_object_free(raw);
      return FromGit(&oid);
    }
  }
  std::string name = "refs/heads/";
  name.append(rev);
  if (auto r = TryRef(repo, name); found(r)) return take(r);
  name.assign("refs/tags/").append(rev);
  if (auto r = TryRef(repo, name); found(r)) return take(r);
  for (std::string_view prefix : {"refs/heads/", "refs/tags/", "refs/pr/", "refs/convert/"}) {
    if (rev.substr(0, prefix.size()) != prefix) continue;
    if (auto r = TryRef(repo, std::string(rev)); found(r)) return take(r);
    break;
  }
  if (hex && rev.size() >= 5 && rev.size() < 40) {
    git_oid oid;
    git_object* raw = nullptr;
    if (git_oid_fromstrn(&oid, rev.data(), rev.size()) == 0 &&
        git_object_lookup_prefix(&raw, repo, &oid, rev.size(), GIT_OBJECT_COMMIT) == 0) {
      ObjectPtr obj(raw);
      return FromGit(git_object_id(obj.get()));
    }
  }
  return RevisionNotFound(rev);
}

Result<std::vector<Ref>> RepoReader::ListRefs(const std::string& path) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  git_reference_iterator* raw_it = nullptr;
  int rc = git_reference_iterator_new(&raw_it, repo);
  if (rc != 0) return Git2Error(rc, "listing refs");
  ReferenceIteratorPtr it(raw_it);
  std::vector<Ref> refs;
  git_reference* raw_ref = nullptr;
  while ((rc = git_reference_next(&raw_ref, it.get())) == 0) {
    ReferencePtr ref(raw_ref);
    if (git_reference_type(ref.get()) != GIT_REFERENCE_DIRECT) continue;
    HANGAR_ASSIGN_OR_RETURN(auto peeled, PeelToCommit(repo, *git_reference_target(ref.get())));
    if (!peeled) continue;
    refs.push_back(Ref{git_reference_name(ref.get()), *peeled});
  }
  if (rc != GIT_ITEROVER) return Git2Error(rc, "listing refs");
  std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) { return a.name < b.name; });
  return refs;
}

Result<std::optional<std::string>> RepoReader::DefaultBranch(const std::string& path) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo, "HEAD");
  if (rc == GIT_ENOTFOUND) return std::optional<std::string>();
  if (rc != 0) return Git2Error(rc, "reading HEAD");
  ReferencePtr head(raw);
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) return std::optional<std::string>();
  std::string_view target = git_reference_symbolic_target(head.get());
  constexpr std::string_view kHeads = "refs/heads/";
  if (target.substr(0, kHeads.size()) != kHeads) return std::optional<std::string>();
  return std::optional<std::string>(target.substr(kHeads.size()));
}

Result<TreeEntry> RepoReader::Lookup(const std::string& path, const Oid& commit,
                                     std::string_view repo_path) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  auto clean = CleanPath(repo_path);
  if (!clean) return EntryNotFound(repo_path);
  HANGAR_ASSIGN_OR_RETURN(auto tree, CommitTree(repo, commit));
  TreeEntry out;
  if (clean->empty()) {
    out.is_dir = true;
    out.oid = FromGit(git_tree_id(tree.get()));
    out.mode = GIT_FILEMODE_TREE;
    return out;
  }
  std::string p(*clean);
  git_tree_entry* raw = nullptr;
  int rc = git_tree_entry_bypath(&raw, tree.get(), p.c_str());
  if (rc == GIT_ENOTFOUND) return EntryNotFound(repo_path);
  if (rc != 0) return Git2Error(rc, "looking up " + p);
  TreeEntryPtr entry(raw);
  HANGAR_ASSIGN_OR_RETURN(auto odb, RepoOdb(repo));
  out.path = std::move(p);
  FillEntry(odb.get(), entry.get(), out);
  return out;
}

Result<std::vector<TreeEntry>> RepoReader::ListTree(const std::string& path, const Oid& commit,
                                                    std::string_view dir, bool recursive) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  auto clean = CleanPath(dir);
  if (!clean) return EntryNotFound(dir);
  HANGAR_ASSIGN_OR_RETURN(auto root, CommitTree(repo, commit));
  TreePtr sub;
  const git_tree* tree = root.get();
  std::string prefix;
  if (!clean->empty()) {
    prefix.assign(*clean);
    git_tree_entry* raw = nullptr;
    int rc = git_tree_entry_bypath(&raw, root.get(), prefix.c_str());
    if (rc == GIT_ENOTFOUND) return EntryNotFound(dir);
    if (rc != 0) return Git2Error(rc, "looking up " + prefix);
    TreeEntryPtr entry(raw);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return EntryNotFound(dir);
    git_tree* raw_tree = nullptr;
    rc = git_tree_lookup(&raw_tree, repo, git_tree_entry_id(entry.get()));
    if (rc != 0) return Git2Error(rc, "reading tree " + prefix);
    sub.reset(raw_tree);
    tree = sub.get();
    prefix.push_back('/');
  }
  HANGAR_ASSIGN_OR_RETURN(auto odb, RepoOdb(repo));
  std::vector<TreeEntry> out;
  if (recursive) {
    HANGAR_ASSIGN_OR_RETURN(auto count, CountEntries(repo, tree));
    out.reserve(count);
  } else {
    out.reserve(git_tree_entrycount(tree));
  }
  HANGAR_TRY(WalkTree(repo, odb.get(), tree, prefix, recursive, out));
  return out;
}

namespace {

// Size of blob `blob` from its object header, without inflating it.
// Errors: EntryNotFound (missing or not a blob), Internal.
Result<uint64_t> BlobSize(git_odb* odb, const Oid& blob) {
  git_oid g = ToGit(blob);
  size_t len = 0;
  git_object_t type;
  int rc = git_odb_read_header(&len, &type, odb, &g);
  if (rc == GIT_ENOTFOUND || (rc == 0 && type != GIT_OBJECT_BLOB)) return EntryNotFound(blob.Hex());
  if (rc != 0) return Git2Error(rc, "reading blob " + blob.Hex());
  return static_cast<uint64_t>(len);
}

}  // namespace

Result<std::string> RepoReader::ReadBlob(const std::string& path, const Oid& blob,
                                         uint64_t max_bytes) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  HANGAR_ASSIGN_OR_RETURN(auto odb, RepoOdb(repo));
  HANGAR_ASSIGN_OR_RETURN(auto size, BlobSize(odb.get(), blob));
  uint64_t len = size;
  if (len > max_bytes)
    return MakeError(ErrorCode::PayloadTooLarge, "blob " + blob.Hex() + " is larger than " +
                                                     std::to_string(max_bytes) + " bytes");
  HANGAR_ASSIGN_OR_RETURN(auto obj, ReadBlobObject(repo, blob));
  return std::string(static_cast<const char*>(git_odb_object_data(obj.get())),
                     git_odb_object_size(obj.get()));
}

namespace {

// Blobs above this are streamed from `git cat-file` instead of inflated into memory.
constexpr uint64_t kInMemoryBlobMax = 4 << 20;

// The window [skip, skip + length) of another source; the bytes before it are discarded.
class WindowSource final : public ByteSource {
 public:
  WindowSource(std::unique_ptr<ByteSource> inner, uint64_t skip, uint64_t length)
      : inner_(std::move(inner)), skip_(skip), remaining_(length) {}

  Result<size_t> Read(std::span<char> buf) override {
    while (skip_ > 0) {
      auto n = inner_->Read(buf.first(std::min<uint64_t>(buf.size(), skip_)));
      if (!n) return n;
      if (*n == 0) return MakeError(ErrorCode::Internal, "blob ended before the range");
      skip_ -= *n;
    }
    if (remaining_ == 0) return size_t{0};
    auto n = inner_->Read(buf.first(std::min<uint64_t>(buf.size(), remaining_)));
    if (!n) return n;
    if (*n == 0) return MakeError(ErrorCode::Internal, "blob ended early");
    remaining_ -= *n;
    return n;
  }
  std::optional<uint64_t> Size() const override { return remaining_; }

 private:
  std::unique_ptr<ByteSource> inner_;
  uint64_t skip_;
  uint64_t remaining_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> RepoReader::OpenBlob(const std::string& path, const Oid& blob,
                                                         uint64_t offset,
                                                         std::optional<uint64_t> length) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  HANGAR_ASSIGN_OR_RETURN(auto odb, RepoOdb(repo));
  HANGAR_ASSIGN_OR_RETURN(auto blob_size, BlobSize(odb.get(), blob));
  uint64_t size = blob_size;
  if (offset > size)
    return MakeError(ErrorCode::RangeNotSatisfiable,
                     "offset " + std::to_string(offset) + " is past the end of the file");
  uint64_t end = length ? std::min(size, offset + std::min(*length, size - offset)) : size;
  if (size > kInMemoryBlobMax) {
    // Large non-LFS blobs stream through git itself: memory stays flat whatever the size.
    auto proc = Command("cat-file")
                    .Arg("blob")
                    .Arg(blob.Hex())
                    .Env("GIT_DIR", path)
                    .Dir(path)
                    .Timeout(std::chrono::hours(6))
                    .Start();
    if (!proc) return std::move(proc).error();
    return std::unique_ptr<ByteSource>(
        new WindowSource(std::make_unique<ProcessSource>(std::move(*proc)), offset, end - offset));
  }
  HANGAR_ASSIGN_OR_RETURN(auto obj, ReadBlobObject(repo, blob));
  return std::unique_ptr<ByteSource>(new BlobSource(std::move(obj), offset, end));
}

Result<CommitInfo> RepoReader::ReadCommit(const std::string& path, const Oid& id) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  HANGAR_ASSIGN_OR_RETURN(auto c, LookupCommit(repo, id));
  return ToCommitInfo(c.get());
}

Result<bool> RepoReader::IsSigned(const std::string& path, const Oid& id) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  git_buf signature = GIT_BUF_INIT, data = GIT_BUF_INIT;
  git_oid g = ToGit(id);
  int rc = git_commit_extract_signature(&signature, &data, repo, &g, nullptr);
  git_buf_dispose(&signature);
  git_buf_dispose(&data);
  if (rc == 0) return true;
  if (rc == GIT_ENOTFOUND) return false;  // unsigned
  if (rc == GIT_EINVALIDSPEC || rc == GIT_EINVALID)
    return MakeError(ErrorCode::RevisionNotFound, "no commit " + id.Hex());
  return Git2Error(rc, "reading commit " + id.Hex());
}

namespace {

// A revision walk from `start` in git log's default order.
Result<RevwalkPtr> StartWalk(git_repository* repo, const Oid& start, unsigned int sorting) {
  auto c = LookupCommit(repo, start);  // RevisionNotFound for a non-commit
  if (!c) return std::move(c).error();
  git_revwalk* raw = nullptr;
  int rc = git_revwalk_new(&raw, repo);
  if (rc != 0) return Git2Error(rc, "starting revision walk");
  RevwalkPtr walk(raw);
  git_revwalk_sorting(walk.get(), sorting);
  git_oid g = ToGit(start);
  rc = git_revwalk_push(walk.get(), &g);
  if (rc != 0) return Git2Error(rc, "starting revision walk");
  return walk;
}

}  // namespace

Result<std::vector<CommitInfo>> RepoReader::Log(const std::string& path, const Oid& start,
                                                size_t skip, size_t limit) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  // Topological + time order: never a parent before its child, even when commits share a
  // timestamp (libgit2's time-only order breaks such ties arbitrarily).
  HANGAR_ASSIGN_OR_RETURN(auto walk, StartWalk(repo, start, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME));
  std::vector<CommitInfo> out;
  git_oid g;
  int rc;
  size_t seen = 0;
  while (out.size() < limit && (rc = git_revwalk_next(&g, walk.get())) == 0) {
    if (seen++ < skip) continue;
    HANGAR_ASSIGN_OR_RETURN(auto c, LookupCommit(repo, FromGit(&g)));
    out.push_back(ToCommitInfo(c.get()));
  }
  if (out.size() < limit && rc != GIT_ITEROVER) return Git2Error(rc, "walking history");
  return out;
}

Result<std::optional<CommitInfo>> RepoReader::LastCommitTouching(const std::string& path,
                                                                 const Oid& start,
                                                                 std::string_view repo_path) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(path));
  auto clean = CleanPath(repo_path);
  if (!clean) return std::optional<CommitInfo>();
  HANGAR_ASSIGN_OR_RETURN(auto first, LookupCommit(repo, start));
  if (clean->empty()) return std::optional(ToCommitInfo(first.get()));
  // git log uses the commit-graph's changed-path Bloom filters; libgit2 would diff trees
  // commit by commit.
  Command cmd("log");
  cmd.Arg("-1").Arg("--format=%H").EndOfOptions().Arg(start.Hex()).Dashes().PathArg(*clean);
  cmd.Env("GIT_DIR", path).Env("GIT_LITERAL_PATHSPECS", "1").Dir(path);
  cmd.Timeout(std::chrono::seconds(30)).MaxOutput(4096);
  HANGAR_ASSIGN_OR_RETURN(auto out, cmd.Run());
  if (!out.ok())
    return MakeError(ErrorCode::Internal, cmd.ToString() + " failed: " + out.stderr_data);
  std::string_view hex(out.stdout_data);
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r')) hex.remove_suffix(1);
  if (hex.empty()) return std::optional<CommitInfo>();
  auto id = Oid::ParseHex(hex);
  if (!id) return MakeError(ErrorCode::Internal, "unexpected git log output: " + out.stdout_data);
  HANGAR_ASSIGN_OR_RETURN(auto c, LookupCommit(repo, *id));
  return std::optional(ToCommitInfo(c.get()));
}

}  // namespace hangar::git

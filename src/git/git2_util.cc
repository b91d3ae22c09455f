#include "git/git2_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace hangar::git::internal {
namespace {

constexpr size_t kCachedReposPerThread = 16;

struct CachedRepo {
  std::string path;
  dev_t dev;
  ino_t ino;
  struct timespec ctime;
  RepositoryPtr repo;
};

// Most recently used first. Freed with the thread.
thread_local std::vector<CachedRepo> t_repos;

bool SameCtime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

void EnsureLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // git itself does not re-hash objects it reads; neither do we (hot read path).
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    // Objects and refs we write are durable before we acknowledge them (DESIGN.md).
    git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
  });
}

Error Git2Error(int rc, std::string_view what) {
  const git_error* e = git_error_last();
  std::string msg(what);
  msg += ": ";
  msg += (e && e->message) ? e->message : ("libgit2 error " + std::to_string(rc));
  return MakeError(ErrorCode::Internal, std::move(msg));
}

Result<git_repository*> OpenCached(const std::string& path) {
  EnsureLibgit2();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  for (size_t i = 0; i < t_repos.size(); ++i) {
    CachedRepo& c = t_repos[i];
    if (c.path != path) continue;
    // Same directory as when opened? A moved, deleted or recreated repo gets a new
    // inode or ctime, and is reopened.
    if (c.dev == st.st_dev && c.ino == st.st_ino && SameCtime(c.ctime, st.st_ctim)) {
      if (i != 0) std::rotate(t_repos.begin(), t_repos.begin() + i, t_repos.begin() + i + 1);
      return t_repos.front().repo.get();
    }
    t_repos.erase(t_repos.begin() + i);
    break;
  }
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(
      &raw, path.c_str(),
      GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE | GIT_REPOSITORY_OPEN_NO_DOTGIT,
      nullptr);
  if (rc == GIT_ENOTFOUND) return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  if (rc != 0) return Git2Error(rc, "opening repository");
  if (t_repos.size() >= kCachedReposPerThread) t_repos.pop_back();
  t_repos.insert(t_repos.begin(),
                 CachedRepo{path, st.st_dev, st.st_ino, st.st_ctim, RepositoryPtr(raw)});
  return raw;
}

Result<git_oid> WriteEmptyTree(git_repository* repo) {
  git_treebuilder* raw_tb = nullptr;
  int rc = git_treebuilder_new(&raw_tb, repo, nullptr);
  if (rc < 0) return Git2Error(rc, "tree builder");
  TreeBuilderPtr empty(raw_tb);
  git_oid tree_id;
  rc = git_treebuilder_write(&tree_id, empty.get());
  if (rc < 0) return Git2Error(rc, "write tree");
  return tree_id;
}

Result<SignaturePtr> MakeSignature(const Signature& s) {
  git_signature* raw = nullptr;
  if (git_signature_new(&raw, s.name.c_str(), s.email.c_str(), s.time, s.offset_minutes) < 0) {
    return MakeError(ErrorCode::BadRequest, "invalid author name");
  }
  return SignaturePtr(raw);
}

}  // namespace hangar::git::internal

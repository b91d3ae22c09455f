#include "git/repo_writer.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "core/repo_path.h"
#include "core/util.h"
#include "git/command.h"
#include "git/git2_util.h"

namespace hangar::git {
namespace {

using namespace internal;
namespace fs = std::filesystem;

// Initial files arranged as directories, names sorted (libgit2 re-sorts in git order).
struct DirNode {
  std::map<std::string, const std::string*> files;
  std::map<std::string, DirNode> dirs;
};

Result<void> AddFile(DirNode& root, std::string_view path, const std::string* content) {
  HANGAR_TRY(ValidateRepoPath(path));
  auto clash = [&] {
    return MakeError(ErrorCode::BadRequest,
                     "initial file '" + std::string(path) + "' clashes with another one");
  };
  DirNode* node = &root;
  size_t start = 0;
  for (;;) {
    size_t end = path.find('/', start);
    std::string name(path.substr(start, end == path.npos ? path.npos : end - start));
    if (end == path.npos) {
      if (node->dirs.count(name) || !node->files.emplace(name, content).second) return clash();
      return {};
    }
    if (node->files.count(name)) return clash();
    node = &node->dirs[name];
    start = end + 1;
  }
}

Result<git_oid> WriteTree(git_repository* repo, const DirNode& node) {
  git_treebuilder* raw = nullptr;
  int rc = git_treebuilder_new(&raw, repo, nullptr);
  if (rc != 0) return Git2Error(rc, "creating tree");
  TreeBuilderPtr builder(raw);
  for (const auto& [name, content] : node.files) {
    git_oid blob;
    rc = git_blob_create_from_buffer(&blob, repo, content->data(), content->size());
    if (rc != 0) return Git2Error(rc, "writing blob " + name);
    rc = git_treebuilder_insert(nullptr, builder.get(), name.c_str(), &blob, GIT_FILEMODE_BLOB);
    if (rc != 0) return Git2Error(rc, "adding " + name);
  }
  for (const auto& [name, child] : node.dirs) {
    HANGAR_ASSIGN_OR_RETURN(auto sub, WriteTree(repo, child));
    rc = git_treebuilder_insert(nullptr, builder.get(), name.c_str(), &sub, GIT_FILEMODE_TREE);
    if (rc != 0) return Git2Error(rc, "adding " + name);
  }
  git_oid tree;
  rc = git_treebuilder_write(&tree, builder.get());
  if (rc != 0) return Git2Error(rc, "writing tree");
  return tree;
}

Result<void> SetServerConfig(const std::string& repo_dir) {
  git_config* raw = nullptr;
  int rc = git_config_open_ondisk(&raw, (repo_dir + "/config").c_str());
  if (rc != 0) return Git2Error(rc, "opening repository config");
  ConfigPtr cfg(raw);
  static constexpr std::pair<const char*, bool> kSettings[] = {
      {"uploadpack.allowFilter", true},               // partial clone (git-lfs.md §9)
      {"uploadpack.allowReachableSHA1InWant", true},  // lazy fetches of reachable objects
      {"receive.advertisePushOptions", true},         // git push -o (git-lfs.md §10)
      {"core.commitGraph", true},
      {"fetch.writeCommitGraph", false},
      {"gc.writeCommitGraph", true},
  };
  for (const auto& [key, value] : kSettings) {
    rc = git_config_set_bool(cfg.get(), key, value);
    if (rc != 0) return Git2Error(rc, std::string("setting ") + key);
  }
  // The hub's own bookkeeping refs (mirrors' fetched and pushed states, issue 18 §4) are
  // neither shown to clients nor writable by them.
  for (const char* key : {"uploadpack.hideRefs", "receive.hideRefs"}) {
    rc = git_config_set_string(cfg.get(), key, kHiddenRefs);
    if (rc != 0) return Git2Error(rc, std::string("setting ") + key);
  }
  return {};
}

Result<Oid> BuildRepo(const std::string& dir,
                      const std::vector<std::pair<std::string, std::string>>& files,
                      const Signature& author, std::string_view message) {
  DirNode root;
  for (const auto& [p, content] : files) HANGAR_TRY(AddFile(root, p, &content));

  git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  opts.flags =
      GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_NO_REINIT | GIT_REPOSITORY_INIT_MKPATH;
  opts.initial_head = "main";
  git_repository* raw = nullptr;
  int rc = git_repository_init_ext(&raw, dir.c_str(), &opts);
  if (rc != 0) return Git2Error(rc, "creating repository");
  RepositoryPtr repo(raw);
  HANGAR_TRY(SetServerConfig(dir));

  HANGAR_ASSIGN_OR_RETURN(auto tree_id, WriteTree(repo.get(), root));
  git_tree* raw_tree = nullptr;
  rc = git_tree_lookup(&raw_tree, repo.get(), &tree_id);
  if (rc != 0) return Git2Error(rc, "reading new tree");
  TreePtr tree(raw_tree);
  git_signature* raw_sig = nullptr;
  rc = git_signature_new(&raw_sig, author.name.c_str(), author.email.c_str(), author.time,
                         author.offset_minutes);
  if (rc != 0) return MakeError(ErrorCode::BadRequest, "invalid author signature");
  SignaturePtr sig(raw_sig);
  std::string msg(message);
  if (msg.empty() || msg.back() != '\n') msg.push_back('\n');
  git_oid commit;
  const git_commit* no_parents[1] = {nullptr};
  rc = git_commit_create(&commit, repo.get(), "refs/heads/main", sig.get(), sig.get(), nullptr,
                         msg.c_str(), tree.get(), 0, no_parents);
  if (rc != 0) return Git2Error(rc, "writing initial commit");
  return FromGit(&commit);
}

std::string ParentOf(const std::string& path) { return fs::path(path).parent_path().string(); }

void FsyncDir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// rename(2) that refuses to replace an existing `to` (EEXIST).
int RenameNoReplace(const std::string& from, const std::string& to) {
  int rc = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {  // filesystem without the flag
    struct stat st;
    if (::lstat(to.c_str(), &st) == 0) {
      errno = EEXIST;
      return -1;
    }
    rc = ::rename(from.c_str(), to.c_str());
  }
  return rc;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

Error ErrnoError(std::string_view what) {
  return MakeError(ErrorCode::Internal, std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

Result<Oid> InitBareRepo(const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& initial_files,
                         const Signature& author, std::string_view message) {
  EnsureLibgit2();
  if (path.empty() || path.back() == '/')
    return MakeError(ErrorCode::Internal, "invalid repository path: " + path);
  if (Exists(path)) return MakeError(ErrorCode::Conflict, "Repository already exists");
  std::string parent = ParentOf(path);
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return MakeError(ErrorCode::Internal, "creating " + parent + ": " + ec.message());
  std::string tmp = (parent.empty() ? "" : parent + "/") + ".tmp-" +
                    fs::path(path).filename().string() + "-" + RandomHex(6);
  auto commit = BuildRepo(tmp, initial_files, author, message);
  if (commit && RenameNoReplace(tmp, path) != 0) {
    commit = errno == EEXIST || errno == ENOTEMPTY
                 ? MakeError(ErrorCode::Conflict, "Repository already exists")
                 : ErrnoError("moving new repository into place");
  }
  if (!commit) {
    fs::remove_all(tmp, ec);
    return commit;
  }
  FsyncDir(parent);
  return commit;
}

Result<void> ApplyServerConfig(const std::string& repo_dir) {
  EnsureLibgit2();
  return SetServerConfig(repo_dir);
}

std::string_view InitialGitattributes() {
  return "*.7z filter=lfs diff=lfs merge=lfs -text\n"
         "*.arrow filter=lfs diff=lfs merge=lfs -text\n"
         "*.bin filter=lfs diff=lfs merge=lfs -text\n"
         "*.bz2 filter=lfs diff=lfs merge=lfs -text\n"
         "*.ckpt filter=lfs diff=lfs merge=lfs -text\n"
         "*.ftz filter=lfs diff=lfs merge=lfs -text\n"
         "*.gz filter=lfs diff=lfs merge=lfs -text\n"
         "*.h5 filter=lfs diff=lfs merge=lfs -text\n"
         "*.joblib filter=lfs diff=lfs merge=lfs -text\n"
         "*.lfs.* filter=lfs diff=lfs merge=lfs -text\n"
         "*.mlmodel filter=lfs diff=lfs merge=lfs -text\n"
         "*.model filter=lfs diff=lfs merge=lfs -text\n"
         "*.msgpack filter=lfs diff=lfs merge=lfs -text\n"
         "*.npy filter=lfs diff=lfs merge=lfs -text\n"
         "*.npz filter=lfs diff=lfs merge=lfs -text\n"
         "*.onnx filter=lfs diff=lfs merge=lfs -text\n"
         "*.ot filter=lfs diff=lfs merge=lfs -text\n"
         "*.parquet filter=lfs diff=lfs merge=lfs -text\n"
         "*.pb filter=lfs diff=lfs merge=lfs -text\n"
         "*.pickle filter=lfs diff=lfs merge=lfs -text\n"
         "*.pkl filter=lfs diff=lfs merge=lfs -text\n"
         "*.pt filter=lfs diff=lfs merge=lfs -text\n"
         "*.pth filter=lfs diff=lfs merge=lfs -text\n"
         "*.rar filter=lfs diff=lfs merge=lfs -text\n"
         "*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
         "saved_model/**/* filter=lfs diff=lfs merge=lfs -text\n"
         "*.tar.* filter=lfs diff=lfs merge=lfs -text\n"
         "*.tar filter=lfs diff=lfs merge=lfs -text\n"
         "*.tflite filter=lfs diff=lfs merge=lfs -text\n"
         "*.tgz filter=lfs diff=lfs merge=lfs -text\n"
         "*.traineddata filter=lfs diff=lfs merge=lfs -text\n"
         "*.wasm filter=lfs diff=lfs merge=lfs -text\n"
         "*.xz filter=lfs diff=lfs merge=lfs -text\n"
         "*.zip filter=lfs diff=lfs merge=lfs -text\n"
         "*.zst filter=lfs diff=lfs merge=lfs -text\n"
         "*tfevents* filter=lfs diff=lfs merge=lfs -text\n";
}

Result<void> WriteCommitGraph(const std::string& path, std::chrono::milliseconds timeout) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return MakeError(ErrorCode::Unavailable, "commit-graph write timed out");
    Command cmd("commit-graph");
    cmd.Arg("write").Arg("--reachable").Arg("--changed-paths").Env("GIT_DIR", path).Dir(path);
    cmd.Timeout(left).MaxOutput(1 << 20);
    HANGAR_ASSIGN_OR_RETURN(auto out, cmd.Run());
    if (out.ok()) return {};
    // "Unable to create '.../commit-graph.lock': File exists": another writer's graph is
    // on its way; ours follows it (it may not include the newest commits).
    bool locked = out.stderr_data.find("commit-graph") != std::string::npos &&
                  out.stderr_data.find(".lock': File exists") != std::string::npos;
    if (!locked) {
      return MakeError(ErrorCode::Internal, cmd.ToString() + " failed: " + out.stderr_data);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<void> MoveRepo(const std::string& from, const std::string& to) {
  if (!Exists(from)) return MakeError(ErrorCode::RepoNotFound, "Repository not found");
  std::string parent = ParentOf(to);
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return MakeError(ErrorCode::Internal, "creating " + parent + ": " + ec.message());
  if (RenameNoReplace(from, to) != 0) {
    if (errno == EEXIST || errno == ENOTEMPTY)
      return MakeError(ErrorCode::Conflict, "A repository already exists at the destination");
    if (errno == ENOENT) return MakeError(ErrorCode::RepoNotFound, "Repository not found");
    return ErrnoError("moving repository");
  }
  FsyncDir(parent);
  FsyncDir(ParentOf(from));
  return {};
}

Result<void> DeleteRepo(const std::string& path) {
  std::string parent = ParentOf(path);
  std::string trash = (parent.empty() ? "" : parent + "/") + ".trash-" +
                      fs::path(path).filename().string() + "-" + RandomHex(6);
  if (::rename(path.c_str(), trash.c_str()) != 0) {
    if (errno == ENOENT) return MakeError(ErrorCode::RepoNotFound, "Repository not found");
    return ErrnoError("moving repository to trash");
  }
  FsyncDir(parent);
  std::error_code ec;
  fs::remove_all(trash, ec);
  if (ec) return MakeError(ErrorCode::Internal, "removing " + trash + ": " + ec.message());
  return {};
}

}  // namespace hangar::git

#include "git/commit_builder.h"

#include <git2.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "core/log.h"
#include "git/git2_util.h"

namespace hangar::git {

using namespace internal;  // NOLINT: RAII handles and conversions of this module

namespace {

constexpr int kMaxAttempts = 5;
constexpr std::chrono::milliseconds kFirstWait{10};
// A ref lock file older than this was left by a process that died while updating the
// ref (kill -9, power loss): git and libgit2 hold ref locks for milliseconds.
constexpr std::chrono::seconds kStaleLock{3};

// A change and the part of its path below the tree being rewritten.
struct Op {
  const TreeChange* change;
  std::string_view rest;
};

Result<std::optional<git_oid>> Rewrite(git_repository* repo, const git_tree* base,
                                       const std::vector<Op>& ops, const std::string& prefix);

// Rebuilds the subtree `name` of `tb` with `ops` (paths below it); removes it when empty.
Result<void> FlushChild(git_repository* repo, git_treebuilder* tb, const std::string& name,
                        const std::vector<Op>& ops, const std::string& prefix) {
  std::string full = prefix + name;
  const git_tree_entry* e = git_treebuilder_get(tb, name.c_str());
  TreePtr sub;
  if (e) {
    if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
      return MakeError(ErrorCode::BadRequest, "'" + full + "' is a file, not a folder");
    }
    git_tree* raw = nullptr;
    int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(e));
    if (rc < 0) return Git2Error(rc, "tree lookup");
    sub.reset(raw);
  }
  HANGAR_ASSIGN_OR_RETURN(auto oid, Rewrite(repo, sub.get(), ops, full + "/"));
  int rc = 0;
  if (!oid) {
    if (e) rc = git_treebuilder_remove(tb, name.c_str());
  } else {
    rc = git_treebuilder_insert(nullptr, tb, name.c_str(), &*oid, GIT_FILEMODE_TREE);
  }
  if (rc < 0) return Git2Error(rc, "tree update");
  return {};
}

// Applies one change naming an entry of this tree directly.
Result<void> ApplyHere(git_repository* repo, git_treebuilder* tb, const TreeChange& c,
                       const std::string& name, const std::string& prefix) {
  std::string full = prefix + name;
  const git_tree_entry* e = git_treebuilder_get(tb, name.c_str());
  bool is_tree = e && git_tree_entry_type(e) == GIT_OBJECT_TREE;
  int rc = 0;
  switch (c.kind) {
    case TreeChange::Kind::Upsert: {
      if (is_tree) return MakeError(ErrorCode::BadRequest, "'" + full + "' is a folder");
      git_filemode_t mode = GIT_FILEMODE_BLOB;
      if (e && git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE) {
        mode = GIT_FILEMODE_BLOB_EXECUTABLE;
      }
      git_oid blob;
      if (c.blob) {
        blob = ToGit(*c.blob);
        git_odb* odb = nullptr;
        rc = git_repository_odb(&odb, repo);
        if (rc < 0) return Git2Error(rc, "open odb");
        bool present = git_odb_exists(odb, &blob) == 1;
        git_odb_free(odb);
        if (!present)
          return MakeError(ErrorCode::EntryNotFound, "blob " + c.blob->Hex() + " not found");
      } else {
        rc = git_blob_create_from_buffer(&blob, repo, c.content.data(), c.content.size());
        if (rc < 0) return Git2Error(rc, "write blob");
      }
      rc = git_treebuilder_insert(nullptr, tb, name.c_str(), &blob, mode);
      break;
    }
    case TreeChange::Kind::DeleteFile:
      if (!e || is_tree) {
        return MakeError(ErrorCode::EntryNotFound, "file '" + full + "' not found");
      }
      rc = git_treebuilder_remove(tb, name.c_str());
      break;
    case TreeChange::Kind::DeleteFolder:
      if (!is_tree) return MakeError(ErrorCode::EntryNotFound, "folder '" + full + "' not found");
      rc = git_treebuilder_remove(tb, name.c_str());
      break;
  }
  if (rc < 0) return Git2Error(rc, "tree update");
  return {};
}

// The tree `base` (nullptr = empty) with `ops` applied in order; nullopt when the result
// is empty. Changes below a subfolder are gathered and applied together, before any later
// change that names the subfolder itself, so the order of the request is kept.
Result<std::optional<git_oid>> Rewrite(git_repository* repo, const git_tree* base,
                                       const std::vector<Op>& ops, const std::string& prefix) {
  git_treebuilder* raw = nullptr;
  int rc = git_treebuilder_new(&raw, repo, base);
  if (rc < 0) return Git2Error(rc, "tree builder");
  TreeBuilderPtr tb(raw);
  std::vector<std::pair<std::string, std::vector<Op>>> pending;  // first-seen order
  auto flush = [&](const std::string& name) -> Result<void> {
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->first != name) continue;
      std::string dir = std::move(it->first);  // `name` may refer to it
      auto ops_below = std::move(it->second);
      pending.erase(it);
      return FlushChild(repo, tb.get(), dir, ops_below, prefix);
    }
    return {};
  };
  for (const Op& op : ops) {
    size_t slash = op.rest.find('/');
    if (slash != std::string_view::npos) {
      std::string head(op.rest.substr(0, slash));
      Op below{op.change, op.rest.substr(slash + 1)};
      auto it = std::find_if(pending.begin(), pending.end(),
                             [&](const auto& p) { return p.first == head; });
      if (it == pending.end())
        pending.emplace_back(head, std::vector<Op>{below});
      else
        it->second.push_back(below);
      continue;
    }
    std::string name(op.rest);
    HANGAR_TRY(flush(name));
    HANGAR_TRY(ApplyHere(repo, tb.get(), *op.change, name, prefix));
  }
  while (!pending.empty()) HANGAR_TRY(flush(pending.front().first));
  if (git_treebuilder_entrycount(tb.get()) == 0) return std::optional<git_oid>();
  git_oid out;
  rc = git_treebuilder_write(&out, tb.get());
  if (rc < 0) return Git2Error(rc, "write tree");
  return std::optional<git_oid>(out);
}

// Builds and writes the commit on `parent`. Returns its id.
Result<git_oid> WriteCommit(git_repository* repo, const git_oid& parent, const CommitRequest& req) {
  git_commit* raw_commit = nullptr;
  int rc = git_commit_lookup(&raw_commit, repo, &parent);
  if (rc < 0) return Git2Error(rc, "commit lookup");
  CommitPtr commit(raw_commit);
  git_tree* raw_tree = nullptr;
  rc = git_commit_tree(&raw_tree, commit.get());
  if (rc < 0) return Git2Error(rc, "commit tree");
  TreePtr base(raw_tree);
  std::vector<Op> ops;
  ops.reserve(req.changes.size());
  for (const auto& c : req.changes) ops.push_back(Op{&c, c.path});
  HANGAR_ASSIGN_OR_RETURN(auto root, Rewrite(repo, base.get(), ops, ""));
  git_oid tree_id;
  if (root) {
    tree_id = *root;
  } else {
    HANGAR_ASSIGN_OR_RETURN(tree_id, WriteEmptyTree(repo));
  }
  git_tree* raw_new = nullptr;
  rc = git_tree_lookup(&raw_new, repo, &tree_id);
  if (rc < 0) return Git2Error(rc, "tree lookup");
  TreePtr tree(raw_new);
  HANGAR_ASSIGN_OR_RETURN(SignaturePtr sig, MakeSignature(req.author));
  const git_commit* parents[] = {commit.get()};
  git_oid out;
  rc = git_commit_create(&out, repo, nullptr, sig.get(), sig.get(), nullptr, req.message.c_str(),
                         tree.get(), 1, parents);
  if (rc < 0) return Git2Error(rc, "write commit");
  return out;
}

}  // namespace

namespace {

// `lock` (a ref's .lock file) is in the way: waits while it is fresh, and removes it once
// it is older than kStaleLock, so a ref whose writer died does not stay locked for ever.
void WaitOrBreakStaleLock(const std::filesystem::path& lock) {
  namespace fs = std::filesystem;
  for (;;) {
    std::error_code ec;
    auto mtime = fs::last_write_time(lock, ec);
    if (ec) return;  // gone
    if (fs::file_time_type::clock::now() - mtime > kStaleLock) {
      if (fs::remove(lock, ec)) Log("git")->warn("removed stale ref lock {}", lock.string());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The lock that queues this process's commits to one branch (striped by repo and ref):
// they would otherwise race to move it and, many at once, run out of attempts (409). The
// compare-and-swap below still guards against other processes.
std::mutex& BranchLock(const std::string& repo_path, const std::string& refname) {
  static std::mutex stripes[64];
  return stripes[std::hash<std::string>{}(repo_path + '\0' + refname) % 64];
}

}  // namespace

Result<Oid> CommitChanges(const std::string& repo_path, const CommitRequest& req) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  std::string refname = req.branch.starts_with("refs/") ? req.branch : "refs/heads/" + req.branch;
  int valid = 0;
  if (req.branch.empty() || git_reference_name_is_valid(&valid, refname.c_str()) < 0 || !valid) {
    return MakeError(ErrorCode::RevisionNotFound, "branch '" + req.branch + "' not found");
  }
  std::minstd_rand jitter(std::random_device{}());
  std::unique_lock<std::mutex> queued;
  if (!req.detached) queued = std::unique_lock(BranchLock(repo_path, refname));
  for (int attempt = 1;; ++attempt) {
    git_oid head;
    int rc = git_reference_name_to_id(&head, repo, refname.c_str());
    if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
      return MakeError(ErrorCode::RevisionNotFound, "branch '" + req.branch + "' not found");
    }
    if (rc < 0) return Git2Error(rc, "read " + refname);
    if (req.expected_parent && FromGit(&head) != *req.expected_parent) {
      return MakeError(ErrorCode::PreconditionFailed, "parentCommit " + req.expected_parent->Hex() +
                                                          " is not the head of '" + req.branch +
                                                          "' (" + FromGit(&head).Hex() + ")");
    }
    HANGAR_ASSIGN_OR_RETURN(auto commit, WriteCommit(repo, head, req));
    if (req.detached) return FromGit(&commit);
    git_reference* raw_ref = nullptr;
    rc = git_reference_create_matching(&raw_ref, repo, refname.c_str(), &commit, 1, &head,
                                       "commit (hangar)");
    if (rc == 0) {
      git_reference_free(raw_ref);
      return FromGit(&commit);
    }
    if (rc != GIT_EMODIFIED && rc != GIT_ELOCKED) return Git2Error(rc, "update " + refname);
    if (rc == GIT_ELOCKED) {
      WaitOrBreakStaleLock(std::filesystem::path(git_repository_path(repo)) / (refname + ".lock"));
      if (attempt < 4 * kMaxAttempts) continue;  // not a move of the branch: again at once
    }
    if (req.expected_parent) {
      return MakeError(ErrorCode::PreconditionFailed, "branch '" + req.branch + "' moved");
    }
    if (attempt >= kMaxAttempts) {
      return MakeError(ErrorCode::Conflict, "branch '" + req.branch + "' kept moving; retry");
    }
    auto wait = kFirstWait * (1 << attempt);
    std::uniform_int_distribution<int64_t> spread(wait.count() / 2, wait.count() * 3 / 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(spread(jitter)));
  }
}

Result<Oid> CommitEmptyRoot(const std::string& repo_path, const Signature& author,
                            const std::string& message) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  HANGAR_ASSIGN_OR_RETURN(git_oid tree_id, WriteEmptyTree(repo));
  git_tree* raw_tree = nullptr;
  int rc = git_tree_lookup(&raw_tree, repo, &tree_id);
  if (rc < 0) return Git2Error(rc, "tree lookup");
  TreePtr tree(raw_tree);
  HANGAR_ASSIGN_OR_RETURN(SignaturePtr sig, MakeSignature(author));
  git_oid out;
  rc = git_commit_create(&out, repo, nullptr, sig.get(), sig.get(), nullptr, message.c_str(),
                         tree.get(), 0, nullptr);
  if (rc < 0) return Git2Error(rc, "write commit");
  return FromGit(&out);
}

}  // namespace hangar::git

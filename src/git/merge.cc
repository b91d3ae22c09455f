#include "git/merge.h"

#include <git2.h>

#include <algorithm>
#include <set>

#include "git/git2_util.h"
#include "git/history_internal.h"

namespace hangar::git {

using namespace internal;  // NOLINT: RAII handles and conversions of this module

namespace {

Result<CommitPtr> LookupCommit(git_repository* repo, const Oid& id) {
  git_oid g = ToGit(id);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &g);
  if (rc == GIT_ENOTFOUND) {
    return MakeError(ErrorCode::RevisionNotFound, "commit " + id.Hex() + " not found");
  }
  if (rc < 0) return Git2Error(rc, "commit lookup");
  return CommitPtr(raw);
}

// Whether `ancestor` is `commit` or in its history.
Result<bool> Reaches(git_repository* repo, const Oid& commit, const Oid& ancestor) {
  // Both must exist: libgit2's ancestry walk reports a missing one as any other failure.
  HANGAR_ASSIGN_OR_RETURN(CommitPtr c1, LookupCommit(repo, commit));
  HANGAR_ASSIGN_OR_RETURN(CommitPtr c2, LookupCommit(repo, ancestor));
  if (commit == ancestor) return true;
  git_oid c = ToGit(commit), a = ToGit(ancestor);
  int rc = git_graph_descendant_of(repo, &c, &a);
  if (rc < 0) return Git2Error(rc, "ancestry");
  return rc == 1;
}

// Whether `a` and `b` share no history.
Result<bool> Unrelated(git_repository* repo, const Oid& a, const Oid& b) {
  git_oid base, ga = ToGit(a), gb = ToGit(b);
  int rc = git_merge_base(&base, repo, &ga, &gb);
  if (rc == GIT_ENOTFOUND) return true;
  if (rc < 0) return Git2Error(rc, "merge base");
  return false;
}

// The three-way merge of `base` and `head` as an index (conflicts left in it).
Result<IndexPtr> MergeIndex(git_repository* repo, const Oid& base, const Oid& head) {
  HANGAR_ASSIGN_OR_RETURN(CommitPtr ours, LookupCommit(repo, base));
  HANGAR_ASSIGN_OR_RETURN(CommitPtr theirs, LookupCommit(repo, head));
  git_merge_options opts = GIT_MERGE_OPTIONS_INIT;
  opts.flags = GIT_MERGE_FIND_RENAMES;
  git_index* raw = nullptr;
  int rc = git_merge_commits(&raw, repo, ours.get(), theirs.get(), &opts);
  if (rc < 0) return Git2Error(rc, "merge");
  return IndexPtr(raw);
}

// The paths in conflict in `index`, sorted, each once.
Result<std::vector<std::string>> Conflicts(git_index* index) {
  if (!git_index_has_conflicts(index)) return std::vector<std::string>{};
  git_index_conflict_iterator* raw = nullptr;
  int rc = git_index_conflict_iterator_new(&raw, index);
  if (rc < 0) return Git2Error(rc, "conflicts");
  std::unique_ptr<git_index_conflict_iterator, void (*)(git_index_conflict_iterator*)> it(
      raw, git_index_conflict_iterator_free);
  std::set<std::string> paths;
  const git_index_entry *ancestor = nullptr, *ours = nullptr, *theirs = nullptr;
  while ((rc = git_index_conflict_next(&ancestor, &ours, &theirs, it.get())) == 0) {
    for (const git_index_entry* e : {ours, theirs, ancestor}) {
      if (e) paths.insert(e->path);
    }
  }
  if (rc != GIT_ITEROVER) return Git2Error(rc, "conflicts");
  return std::vector<std::string>(paths.begin(), paths.end());
}

}  // namespace

Result<MergeCheck> CheckMerge(const std::string& repo_path, const Oid& base, const Oid& head) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  MergeCheck out;
  HANGAR_ASSIGN_OR_RETURN(out.up_to_date, Reaches(repo, base, head));
  if (out.up_to_date) return out;
  HANGAR_ASSIGN_OR_RETURN(out.fast_forward, Reaches(repo, head, base));
  if (out.fast_forward) return out;
  HANGAR_ASSIGN_OR_RETURN(out.unrelated, Unrelated(repo, base, head));
  if (out.unrelated) return out;
  HANGAR_ASSIGN_OR_RETURN(IndexPtr index, MergeIndex(repo, base, head));
  HANGAR_ASSIGN_OR_RETURN(out.conflicts, Conflicts(index.get()));
  return out;
}

Result<Oid> MergeInto(const std::string& repo_path, const std::string& refname, const Oid& base,
                      const Oid& head, const Signature& author, const std::string& message) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  HANGAR_ASSIGN_OR_RETURN(bool up_to_date, Reaches(repo, base, head));
  if (up_to_date) return base;
  HANGAR_ASSIGN_OR_RETURN(bool fast_forward, Reaches(repo, head, base));
  git_oid target = ToGit(head);
  if (!fast_forward) {
    HANGAR_ASSIGN_OR_RETURN(bool unrelated, Unrelated(repo, base, head));
    if (unrelated) {
      return MakeError(ErrorCode::Conflict,
                       "the histories are unrelated: nothing in common to merge into " + refname);
    }
    HANGAR_ASSIGN_OR_RETURN(IndexPtr index, MergeIndex(repo, base, head));
    HANGAR_ASSIGN_OR_RETURN(auto conflicts, Conflicts(index.get()));
    if (!conflicts.empty()) {
      std::string list;
      for (size_t i = 0; i < conflicts.size() && i < 20; ++i) {
        list += (i ? ", " : "") + conflicts[i];
      }
      if (conflicts.size() > 20) list += ", …";
      return MakeError(
          ErrorCode::Conflict,
          "merge conflict in " + std::to_string(conflicts.size()) + " file(s): " + list);
    }
    git_oid tree_id;
    int rc = git_index_write_tree_to(&tree_id, index.get(), repo);
    if (rc < 0) return Git2Error(rc, "write merged tree");
    git_tree* raw_tree = nullptr;
    rc = git_tree_lookup(&raw_tree, repo, &tree_id);
    if (rc < 0) return Git2Error(rc, "tree lookup");
    TreePtr tree(raw_tree);
    HANGAR_ASSIGN_OR_RETURN(CommitPtr ours, LookupCommit(repo, base));
    HANGAR_ASSIGN_OR_RETURN(CommitPtr theirs, LookupCommit(repo, head));
    HANGAR_ASSIGN_OR_RETURN(SignaturePtr sig, MakeSignature(author));
    const git_commit* parents[] = {ours.get(), theirs.get()};
    rc = git_commit_create(&target, repo, nullptr, sig.get(), sig.get(), nullptr, message.c_str(),
                           tree.get(), 2, parents);
    if (rc < 0) return Git2Error(rc, "write merge commit");
  }
  git_oid expected = ToGit(base);
  git_reference* raw_ref = nullptr;
  int rc = git_reference_create_matching(&raw_ref, repo, refname.c_str(), &target, 1, &expected,
                                         "merge (hangar)");
  if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED) {
    return MakeError(ErrorCode::Conflict, refname + " moved while merging; retry");
  }
  if (rc < 0) return Git2Error(rc, "update " + refname);
  git_reference_free(raw_ref);
  return FromGit(&target);
}

Result<std::vector<LogEntry>> CommitsSince(const std::string& repo_path,
                                           const std::vector<Oid>& hide, const Oid& head,
                                           size_t limit) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  git_revwalk* raw = nullptr;
  int rc = git_revwalk_new(&raw, repo);
  if (rc < 0) return Git2Error(rc, "revwalk");
  RevwalkPtr walk(raw);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  git_oid h = ToGit(head);
  rc = git_revwalk_push(walk.get(), &h);
  if (rc == GIT_ENOTFOUND) {
    return MakeError(ErrorCode::RevisionNotFound, "commit " + head.Hex() + " not found");
  }
  if (rc < 0) return Git2Error(rc, "revwalk");
  for (const auto& oid : hide) {
    git_oid s = ToGit(oid);
    // A commit the repo lost (history rewritten) hides nothing.
    rc = git_revwalk_hide(walk.get(), &s);
    if (rc < 0 && rc != GIT_ENOTFOUND) return Git2Error(rc, "revwalk");
  }
  std::vector<LogEntry> out;
  git_oid next;
  while (out.size() < limit && (rc = git_revwalk_next(&next, walk.get())) == 0) {
    HANGAR_ASSIGN_OR_RETURN(CommitPtr c, LookupCommit(repo, FromGit(&next)));
    LogEntry e;
    e.id = FromGit(&next);
    for (unsigned i = 0; i < git_commit_parentcount(c.get()); ++i) {
      e.parents.push_back(FromGit(git_commit_parent_id(c.get(), i)));
    }
    auto person = [](const git_signature* s) {
      return Person{s->name ? s->name : "", s->email ? s->email : "", s->when.time};
    };
    e.author = person(git_commit_author(c.get()));
    e.committer = person(git_commit_committer(c.get()));
    e.subject = history_internal::LogSubject(BoundedMessage(git_commit_message(c.get())));
    out.push_back(std::move(e));
  }
  if (rc < 0 && rc != GIT_ITEROVER) return Git2Error(rc, "revwalk");
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace hangar::git

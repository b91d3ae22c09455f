#include "git/history_rewrite.h"

#include <git2.h>

#include <optional>
#include <unordered_map>

#include "git/git2_util.h"

namespace hangar::git {

using namespace internal;  // NOLINT: RAII handles and conversions of this module

namespace {

// Moves `refname` from `from` to `to`. Errors: Conflict (it moved), Internal.
Result<void> MoveRef(git_repository* repo, const std::string& refname, const git_oid& to,
                     const git_oid& from, const char* why) {
  git_reference* raw = nullptr;
  int rc = git_reference_create_matching(&raw, repo, refname.c_str(), &to, 1, &from, why);
  if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED) {
    return MakeError(ErrorCode::Conflict, refname + " moved meanwhile; retry");
  }
  if (rc < 0) return Git2Error(rc, "update " + refname);
  git_reference_free(raw);
  return {};
}

// Trees and commits rewritten without the blobs of `drop`, each once.
class Rewriter {
 public:
  Rewriter(git_repository* repo, const std::unordered_set<Oid>& drop) : repo_(repo), drop_(drop) {}

  // Tree `id` without the dropped blobs (and without the subtrees that leaves empty);
  // none when nothing is left of it.
  Result<std::optional<Oid>> Tree(const Oid& id) {
    if (auto it = trees_.find(id); it != trees_.end()) return it->second;
    git_oid gid = ToGit(id);
    git_tree* raw = nullptr;
    int rc = git_tree_lookup(&raw, repo_, &gid);
    if (rc < 0) return Git2Error(rc, "tree lookup");
    TreePtr tree(raw);
    struct Kept {
      const git_tree_entry* entry;
      std::optional<Oid> id;  // a rewritten subtree
    };
    std::vector<Kept> kept;
    bool changed = false;
    const size_t n = git_tree_entrycount(tree.get());
    for (size_t i = 0; i < n; ++i) {
      const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
      const Oid eid = FromGit(git_tree_entry_id(e));
      switch (git_tree_entry_type(e)) {
        case GIT_OBJECT_BLOB:
          if (drop_.count(eid)) {
            changed = true;
            continue;
          }
          kept.push_back({e, std::nullopt});
          break;
        case GIT_OBJECT_TREE: {
          HANGAR_ASSIGN_OR_RETURN(auto sub, Tree(eid));
          if (!sub) {
            changed = true;
            continue;
          }
          if (*sub != eid) changed = true;
          kept.push_back({e, *sub});
          break;
        }
        default:
          kept.push_back({e, std::nullopt});
      }
    }
    std::optional<Oid> out = id;
    if (changed) {
      if (kept.empty()) {
        out = std::nullopt;
      } else {
        git_treebuilder* raw_tb = nullptr;
        rc = git_treebuilder_new(&raw_tb, repo_, nullptr);
        if (rc < 0) return Git2Error(rc, "tree builder");
        TreeBuilderPtr tb(raw_tb);
        // Modes as libgit2 normalizes them: old trees may hold 100664, which it will not write.
        for (const auto& k : kept) {
          git_oid eid = k.id ? ToGit(*k.id) : *git_tree_entry_id(k.entry);
          rc = git_treebuilder_insert(nullptr, tb.get(), git_tree_entry_name(k.entry), &eid,
                                      git_tree_entry_filemode(k.entry));
          if (rc < 0) return Git2Error(rc, "tree insert");
        }
        git_oid written;
        rc = git_treebuilder_write(&written, tb.get());
        if (rc < 0) return Git2Error(rc, "write tree");
        out = FromGit(&written);
      }
    }
    trees_.emplace(id, out);
    return out;
  }

  // Commit `id` with its rewritten tree and parents; its parents first (Walk's order).
  Result<Oid> Commit(const Oid& id) {
    git_oid gid = ToGit(id);
    git_commit* raw = nullptr;
    int rc = git_commit_lookup(&raw, repo_, &gid);
    if (rc < 0) return Git2Error(rc, "commit lookup");
    CommitPtr c(raw);
    const Oid old_tree = FromGit(git_commit_tree_id(c.get()));
    HANGAR_ASSIGN_OR_RETURN(auto tree_id, Tree(old_tree));
    if (!tree_id) {
      HANGAR_ASSIGN_OR_RETURN(git_oid empty, WriteEmptyTree(repo_));
      tree_id = FromGit(&empty);
    }
    bool changed = *tree_id != old_tree;
    std::vector<CommitPtr> parents;
    for (unsigned i = 0; i < git_commit_parentcount(c.get()); ++i) {
      Oid p = FromGit(git_commit_parent_id(c.get(), i));
      auto it = commits_.find(p);
      Oid np = it == commits_.end() ? p : it->second;
      if (np != p) changed = true;
      git_oid gp = ToGit(np);
      git_commit* raw_p = nullptr;
      rc = git_commit_lookup(&raw_p, repo_, &gp);
      if (rc < 0) return Git2Error(rc, "parent lookup");
      parents.emplace_back(raw_p);
    }
    Oid out = id;
    if (changed) {
      git_oid gt = ToGit(*tree_id);
      git_tree* raw_tree = nullptr;
      rc = git_tree_lookup(&raw_tree, repo_, &gt);
      if (rc < 0) return Git2Error(rc, "tree lookup");
      TreePtr tree(raw_tree);
      std::vector<const git_commit*> ps;
      for (const auto& p : parents) ps.push_back(p.get());
      git_oid written;
      rc = git_commit_create(&written, repo_, nullptr, git_commit_author(c.get()),
                             git_commit_committer(c.get()), git_commit_message_encoding(c.get()),
                             git_commit_message_raw(c.get()), tree.get(), ps.size(), ps.data());
      if (rc < 0) return Git2Error(rc, "write commit");
      out = FromGit(&written);
    }
    commits_.emplace(id, out);
    return out;
  }

  // Rewrites every commit reachable from `tips`, parents before children.
  Result<void> Walk(const std::vector<Oid>& tips) {
    git_revwalk* raw = nullptr;
    int rc = git_revwalk_new(&raw, repo_);
    if (rc < 0) return Git2Error(rc, "revwalk");
    RevwalkPtr walk(raw);
    git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
    for (const auto& t : tips) {
      git_oid g = ToGit(t);
      rc = git_revwalk_push(walk.get(), &g);
      if (rc < 0) return Git2Error(rc, "revwalk");
    }
    git_oid next;
    while ((rc = git_revwalk_next(&next, walk.get())) == 0) {
      HANGAR_TRY(Commit(FromGit(&next)));
    }
    if (rc != GIT_ITEROVER) return Git2Error(rc, "revwalk");
    return {};
  }

  Oid Rewritten(const Oid& commit) const {
    auto it = commits_.find(commit);
    return it == commits_.end() ? commit : it->second;
  }

 private:
  git_repository* repo_;
  const std::unordered_set<Oid>& drop_;
  std::unordered_map<Oid, std::optional<Oid>> trees_;
  std::unordered_map<Oid, Oid> commits_;
};

// A ref with what it points at, and the commit that peels to (none: not a commit).
struct RefTarget {
  std::string name;
  Oid target;
  std::optional<Oid> commit;
  bool tag_object = false;
};

Result<std::vector<RefTarget>> ListRefs(git_repository* repo) {
  git_reference_iterator* raw = nullptr;
  int rc = git_reference_iterator_glob_new(&raw, repo, "refs/*");
  if (rc < 0) return Git2Error(rc, "list refs");
  ReferenceIteratorPtr it(raw);
  std::vector<RefTarget> out;
  git_reference* ref = nullptr;
  while ((rc = git_reference_next(&ref, it.get())) == 0) {
    ReferencePtr owned(ref);
    if (git_reference_type(ref) != GIT_REFERENCE_DIRECT) continue;
    RefTarget t{git_reference_name(ref), FromGit(git_reference_target(ref)), std::nullopt, false};
    git_object* peeled = nullptr;
    if (git_reference_peel(&peeled, ref, GIT_OBJECT_COMMIT) == 0) {
      t.commit = FromGit(git_object_id(peeled));
      t.tag_object = *t.commit != t.target;
      git_object_free(peeled);
    }
    out.push_back(std::move(t));
  }
  if (rc != GIT_ITEROVER) return Git2Error(rc, "list refs");
  return out;
}

}  // namespace

Result<Oid> SquashInto(const std::string& repo_path, const std::string& refname, const Oid& head,
                       const Signature& author, const std::string& message) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  git_oid gh = ToGit(head);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &gh);
  if (rc == GIT_ENOTFOUND) return MakeError(ErrorCode::RevisionNotFound, "commit not found");
  if (rc < 0) return Git2Error(rc, "commit lookup");
  CommitPtr commit(raw);
  git_tree* raw_tree = nullptr;
  rc = git_commit_tree(&raw_tree, commit.get());
  if (rc < 0) return Git2Error(rc, "commit tree");
  TreePtr tree(raw_tree);
  HANGAR_ASSIGN_OR_RETURN(SignaturePtr sig, MakeSignature(author));
  git_oid out;
  rc = git_commit_create(&out, repo, nullptr, sig.get(), sig.get(), nullptr, message.c_str(),
                         tree.get(), 0, nullptr);
  if (rc < 0) return Git2Error(rc, "write commit");
  HANGAR_TRY(MoveRef(repo, refname, out, gh, "super-squash (hangar)"));
  return FromGit(&out);
}

Result<std::vector<RefRewrite>> RewriteWithout(const std::string& repo_path,
                                               const std::unordered_set<Oid>& drop) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(repo_path));
  HANGAR_ASSIGN_OR_RETURN(auto refs, ListRefs(repo));
  std::vector<Oid> tips;
  for (const auto& r : refs) {
    if (r.commit) tips.push_back(*r.commit);
  }
  Rewriter rewriter(repo, drop);
  HANGAR_TRY(rewriter.Walk(tips));
  std::vector<RefRewrite> moved;
  for (const auto& r : refs) {
    if (!r.commit) continue;
    const Oid to = rewriter.Rewritten(*r.commit);
    if (to == *r.commit) continue;
    git_oid target = ToGit(to);
    if (r.tag_object) {
      // The tag again, on the new commit, with its tagger and message.
      git_oid old_tag = ToGit(r.target);
      git_tag* raw_tag = nullptr;
      int rc = git_tag_lookup(&raw_tag, repo, &old_tag);
      if (rc < 0) return Git2Error(rc, "tag lookup");
      std::unique_ptr<git_tag, void (*)(git_tag*)> tag(raw_tag, git_tag_free);
      git_object* raw_obj = nullptr;
      rc = git_object_lookup(&raw_obj, repo, &target, GIT_OBJECT_COMMIT);
      if (rc < 0) return Git2Error(rc, "commit lookup");
      ObjectPtr obj(raw_obj);
      rc = git_tag_annotation_create(&target, repo, git_tag_name(tag.get()), obj.get(),
                                     git_tag_tagger(tag.get()), git_tag_message(tag.get()));
      if (rc < 0) return Git2Error(rc, "write tag");
    }
    git_oid from = ToGit(r.target);
    HANGAR_TRY(MoveRef(repo, r.name, target, from, "history rewrite (hangar)"));
    moved.push_back(RefRewrite{r.name, *r.commit, to});
  }
  return moved;
}

}  // namespace hangar::git

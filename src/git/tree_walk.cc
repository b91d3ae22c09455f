#include "git/tree_walk.h"

#include <algorithm>
#include <cstring>

#include "git/git2_util.h"

namespace hangar::git::internal {
namespace {

// Sorting key of one tree entry among its siblings. A directory appears twice: itself
// (`slash` false) and the block of its descendants, which sorts as "<name>/" — so that
// emitting siblings in key order yields all full paths in bytewise order without a global
// sort (git's own order compares every directory as "<name>/", even the entry itself).
struct SiblingKey {
  std::string_view name;
  bool slash;
  uint32_t index;
};

bool KeyLess(const SiblingKey& a, const SiblingKey& b) {
  size_t n = std::min(a.name.size(), b.name.size());
  int c = std::memcmp(a.name.data(), b.name.data(), n);
  if (c != 0) return c < 0;
  // One name is a prefix of the other; the next byte is the virtual '/', or the end.
  auto next = [n](const SiblingKey& k) -> int {
    if (n < k.name.size()) return static_cast<unsigned char>(k.name[n]);
    if (k.slash) return '/';
    return -1;
  };
  int na = next(a), nb = next(b);
  if (na != nb) return na < nb;
  if (na == -1) return false;  // equal
  return a.name.size() + a.slash < b.name.size() + b.slash;
}

}  // namespace

void FillEntry(git_odb* odb, const git_tree_entry* e, TreeEntry& out) {
  git_object_t type = git_tree_entry_type(e);
  out.is_dir = type == GIT_OBJECT_TREE;
  out.oid = FromGit(git_tree_entry_id(e));
  out.mode = static_cast<uint32_t>(git_tree_entry_filemode(e));
  out.size = 0;
  if (type == GIT_OBJECT_BLOB) {
    size_t len = 0;
    git_object_t t;
    // The header only: size without inflating the blob.
    if (git_odb_read_header(&len, &t, odb, git_tree_entry_id(e)) == 0) out.size = len;
  }
}

// The number of entries below `tree`, all levels (trees come from libgit2's object cache
// on the second walk), so the result vector is allocated once.
Result<size_t> CountEntries(git_repository* repo, const git_tree* tree) {
  size_t n = git_tree_entrycount(tree), total = n;
  for (size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    if (git_tree_entry_type(e) != GIT_OBJECT_TREE) continue;
    git_tree* raw = nullptr;
    int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(e));
    if (rc != 0) return Git2Error(rc, "reading tree");
    TreePtr sub(raw);
    auto below = CountEntries(repo, sub.get());
    if (!below) return below;
    total += *below;
  }
  return total;
}

// Appends the entries of `tree` (whose path is `prefix`, "" or ending in '/') in
// bytewise path order.
Result<void> WalkTree(git_repository* repo, git_odb* odb, const git_tree* tree, std::string& prefix,
                      bool recursive, std::vector<TreeEntry>& out) {
  size_t n = git_tree_entrycount(tree);
  std::vector<SiblingKey> keys;
  keys.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    std::string_view name = git_tree_entry_name(e);
    keys.push_back({name, false, static_cast<uint32_t>(i)});
    if (recursive && git_tree_entry_type(e) == GIT_OBJECT_TREE)
      keys.push_back({name, true, static_cast<uint32_t>(i)});
  }
  std::sort(keys.begin(), keys.end(), KeyLess);
  for (const SiblingKey& key : keys) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, key.index);
    if (!key.slash) {
      TreeEntry& entry = out.emplace_back();
      entry.path.reserve(prefix.size() + key.name.size());
      entry.path.append(prefix).append(key.name);
      FillEntry(odb, e, entry);
      continue;
    }
    git_tree* raw = nullptr;
    int rc = git_tree_lookup(&raw, repo, git_tree_entry_id(e));
    if (rc != 0) return Git2Error(rc, "reading tree " + prefix + std::string(key.name));
    TreePtr sub(raw);
    size_t old = prefix.size();
    prefix.append(key.name).push_back('/');
    HANGAR_TRY(WalkTree(repo, odb, sub.get(), prefix, recursive, out));
    prefix.resize(old);
  }
  return {};
}

}  // namespace hangar::git::internal

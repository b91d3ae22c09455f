#include "git/path_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <queue>
#include <unordered_map>

#include "git/commit_graph.h"
#include "git/git2_util.h"

namespace hangar::git {
namespace {

using namespace internal;

// Whether git would rewrite history here (grafts, replace refs, a shallow clone), which
// the commit-graph does not describe; git then ignores the graph and so do we.
bool RewritesHistory(const std::string& repo) {
  struct stat st;
  if (::stat((repo + "/info/grafts").c_str(), &st) == 0) return true;
  if (::stat((repo + "/shallow").c_str(), &st) == 0) return true;
  std::error_code ec;
  std::filesystem::directory_iterator replace(repo + "/refs/replace", ec);
  if (!ec && replace != std::filesystem::directory_iterator()) return true;
  int fd = ::open((repo + "/packed-refs").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string packed;
  char buf[64 << 10];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) packed.append(buf, size_t(n));
  ::close(fd);
  return packed.find(" refs/replace/") != packed.npos;
}

// One side of a path comparison: the entry reached so far, or absent.
struct Entry {
  bool present = false;
  git_oid oid{};
  git_filemode_t mode = GIT_FILEMODE_TREE;
};

// One walk (path_log.h has the rules). The entry at the path is read from a commit's tree
// only when a comparison needs it, and passed down from a commit to the parent it is
// TREESAME to, so a commit the filter cannot clear costs one tree path read (its parent's).
class Walker {
 public:
  Walker(git_repository* repo, const CommitGraph& graph, std::string_view path)
      : repo_(repo), graph_(graph), keys_(path), seen_(graph.size()), known_(graph.size()) {
    for (size_t start = 0; start <= path.size();) {
      size_t slash = std::min(path.find('/', start), path.size());
      components_.emplace_back(path.substr(start, slash - start));
      start = slash + 1;
    }
  }

  std::optional<std::vector<Oid>> Run(const Oid& start, size_t skip, size_t count) {
    std::vector<Oid> out;
    if (count == 0) return out;
    auto first = NodeOf(start);
    if (!first) return std::nullopt;
    Push(*first);
    size_t found = 0;
    std::vector<Id> parents;
    while (!queue_.empty()) {
      const Id c = queue_.top().id;
      queue_.pop();
      parents.clear();
      if (!ParentsOf(c, parents)) return std::nullopt;
      for (Id p : parents)  // overlaps their cache misses with this commit's filter's
        if (InGraph(p)) graph_.Prefetch(p);
      bool shown = true;
      size_t follow = 0, follow_end = parents.size();
      if (parents.empty()) {
        auto value = ValueOf(c);
        if (!value) return std::nullopt;
        shown = values_[*value].present;
      }
      for (size_t i = 0; i < parents.size(); ++i) {
        bool same = (i == 0 && InGraph(c) && !graph_.MaybeChanged(c, keys_)) ||
                    TreeOf(c) == TreeOf(parents[i]);
        if (!same) {
          auto mine = ValueOf(c), theirs = ValueOf(parents[i]);
          if (!mine || !theirs) return std::nullopt;
          same = Same(values_[*mine], values_[*theirs]);
        }
        if (same) {  // TREESAME to this parent: hide the commit, walk only this parent
          // The parent has the same entry: remembered, its own comparison reads one tree.
          if (uint32_t v = Known(c); v != 0 && Known(parents[i]) == 0) Known(parents[i]) = v;
          shown = false;
          follow = i;
          follow_end = i + 1;
          break;
        }
      }
      for (size_t i = follow; i < follow_end; ++i) Push(parents[i]);
      if (!shown) continue;
      if (found++ >= skip) out.push_back(OidOf(c));
      if (out.size() == count) break;
    }
    return out;
  }

 private:
  // A graph position, or graph_.size() + an index into extras_ for commits not in it.
  using Id = uint32_t;
  struct Extra {
    Oid oid, tree;
    int64_t time = 0;
    std::vector<Oid> parents;
    bool seen = false;
    uint32_t known = 0;  // as known_
  };
  struct Queued {
    int64_t time;
    uint64_t seq;
    Id id;
  };
  // Newest first; equal times in queueing order (git's commit_list_insert_by_date).
  struct Later {
    bool operator()(const Queued& a, const Queued& b) const {
      return a.time != b.time ? a.time < b.time : a.seq > b.seq;
    }
  };

  bool InGraph(Id id) const { return id < graph_.size(); }
  Extra& ExtraOf(Id id) { return extras_[id - graph_.size()]; }
  Oid OidOf(Id id) { return InGraph(id) ? graph_.CommitAt(id) : ExtraOf(id).oid; }
  Oid TreeOf(Id id) { return InGraph(id) ? graph_.TreeAt(id) : ExtraOf(id).tree; }

  void Push(Id id) {
    if (InGraph(id)) {
      if (seen_[id]) return;
      seen_[id] = true;
    } else {
      if (ExtraOf(id).seen) return;
      ExtraOf(id).seen = true;
    }
    int64_t time = InGraph(id) ? graph_.TimeAt(id) : ExtraOf(id).time;
    queue_.push({time, seq_++, id});
  }

  // The node of commit `oid`: its graph position, else the commit read with libgit2.
  std::optional<Id> NodeOf(const Oid& oid) {
    if (auto pos = graph_.Find(oid)) return *pos;
    if (auto it = extra_ids_.find(oid); it != extra_ids_.end()) return it->second;
    git_oid g = ToGit(oid);
    git_commit* raw = nullptr;
    if (git_commit_lookup(&raw, repo_, &g) != 0) return std::nullopt;
    CommitPtr commit(raw);
    Extra e;
    e.oid = oid;
    e.tree = FromGit(git_commit_tree_id(commit.get()));
    e.time = git_commit_time(commit.get());
    for (unsigned i = 0, n = git_commit_parentcount(commit.get()); i < n; ++i)
      e.parents.push_back(FromGit(git_commit_parent_id(commit.get(), i)));
    Id id = Id(graph_.size() + extras_.size());
    extras_.push_back(std::move(e));
    extra_ids_.emplace(oid, id);
    return id;
  }

  bool ParentsOf(Id id, std::vector<Id>& out) {
    if (InGraph(id)) return graph_.Parents(id, out);
    std::vector<Oid> oids = ExtraOf(id).parents;  // NodeOf may grow extras_
    for (const Oid& p : oids) {
      auto node = NodeOf(p);
      if (!node) return false;
      out.push_back(*node);
    }
    return true;
  }

  // Moves `e` to its child `name` (absent unless `e` is a tree holding it); false on a
  // read error.
  bool Step(Entry& e, const std::string& name) {
    if (!e.present || e.mode != GIT_FILEMODE_TREE) {
      e.present = false;
      return true;
    }
    git_tree* raw = nullptr;
    if (git_tree_lookup(&raw, repo_, &e.oid) != 0) return false;
    TreePtr tree(raw);
    const git_tree_entry* child = git_tree_entry_byname(tree.get(), name.c_str());
    e.present = child != nullptr;
    if (child) {
      e.oid = *git_tree_entry_id(child);
      e.mode = git_tree_entry_filemode(child);
    }
    return true;
  }

  static bool Same(const Entry& a, const Entry& b) {
    return a.present == b.present &&
           (!a.present || (a.mode == b.mode && git_oid_equal(&a.oid, &b.oid)));
  }

  // 1 + the index in values_ of the entry at the path in commit `id`; 0 = not known yet.
  uint32_t& Known(Id id) { return InGraph(id) ? known_[id] : ExtraOf(id).known; }

  // The index in values_ of the entry at the path in commit `id`, read from its tree
  // unless known (TREESAME children pass theirs down); nullopt on a read error.
  std::optional<uint32_t> ValueOf(Id id) {
    if (uint32_t v = Known(id)) return v - 1;
    Entry e{true, ToGit(TreeOf(id))};
    for (const std::string& name : components_) {
      if (!Step(e, name)) return std::nullopt;
      if (!e.present) break;
    }
    values_.push_back(e);
    Known(id) = uint32_t(values_.size());
    return uint32_t(values_.size() - 1);
  }

  git_repository* repo_;
  const CommitGraph& graph_;
  BloomKeys keys_;
  std::vector<std::string> components_;
  std::vector<bool> seen_;       // by graph position
  std::vector<uint32_t> known_;  // by graph position: see Known()
  std::vector<Entry> values_;
  std::vector<Extra> extras_;
  std::unordered_map<Oid, Id> extra_ids_;
  std::priority_queue<Queued, std::vector<Queued>, Later> queue_;
  uint64_t seq_ = 0;
};

}  // namespace

std::optional<std::vector<Oid>> PathLog(const std::string& repo, const Oid& start,
                                        std::string_view path, size_t skip, size_t count) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return std::nullopt;
  if (RewritesHistory(repo)) return std::nullopt;
  auto graph = CommitGraph::Open(repo);
  // Without Bloom filters every commit costs a tree comparison: git log is as fast.
  if (!graph || !graph->has_bloom()) return std::nullopt;
  auto handle = OpenCached(repo);
  if (!handle) return std::nullopt;
  return Walker(*handle, *graph, path).Run(start, skip, count);
}

}  // namespace hangar::git

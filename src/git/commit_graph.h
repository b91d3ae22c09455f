#pragma once
// CommitGraph: a read-only, mmap-based reader of a repository's commit-graph
// (gitformat-commit-graph(5)): the single file objects/info/commit-graph, or the split
// chain objects/info/commit-graphs/commit-graph-chain + graph-<hash>.graph layers.
// Gives what a history walk needs without parsing commit objects: a commit's position,
// root tree, parents and committer time (OIDF/OIDL/CDAT/EDGE), and its changed-path
// Bloom filter (BIDX/BDAT), which answers "definitely not changed" for a path.
//
// Nothing in the files is trusted: the header and chunk table are checked on Open, every
// position, index and offset is checked against its chunk on use. A malformed file makes
// Open return nullptr (or an accessor return false / "maybe"), never undefined behaviour.
// Immutable after Open; safe to share between threads.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/oid.h"

namespace hangar::git {

// The murmur3 x86 32-bit hash of `data` with `seed` as the commit-graph's Bloom filters
// use it (gitformat-commit-graph §BDAT). `version` 1 reads bytes as signed char (what git
// up to 2.45 writes; it differs from murmur3 for bytes >= 0x80), any other value as
// unsigned char (hash version 2).
uint32_t BloomMurmur3(std::string_view data, uint32_t seed, uint32_t version);

// The Bloom keys of a path: the path itself and each leading directory ("a/b/c" →
// "a/b/c", "a/b", "a"), hashed once for both hash versions (seeds 0x293ae76f, 0x7e646e2c).
class BloomKeys {
 public:
  explicit BloomKeys(std::string_view path);
  struct Hash {
    uint32_t h0 = 0, h1 = 0;  // bit i of k hashes is h0 + i*h1 (mod 2^32)
  };
  // The keys' hash pairs for hash `version` (1 or 2).
  const std::vector<Hash>& For(uint32_t version) const { return version == 1 ? v1_ : v2_; }

 private:
  std::vector<Hash> v1_, v2_;
};

// Whether filter `filter` (a commit's BDAT bytes) may contain `key` with `num_hashes`
// hashes: false only when some bit is clear ("definitely not"). An empty filter → true.
bool BloomMaybeContains(std::span<const uint8_t> filter, const BloomKeys::Hash& key,
                        uint32_t num_hashes);

class CommitGraph {
 public:
  // Graph positions count commits over all layers, base layer first.
  using Pos = uint32_t;

  // The repository's commit-graph (`repo` is the bare repository's directory), or nullptr
  // when it has none, it cannot be read, or it is malformed or of an unknown version.
  static std::unique_ptr<CommitGraph> Open(const std::string& repo);
  ~CommitGraph();
  CommitGraph(const CommitGraph&) = delete;
  CommitGraph& operator=(const CommitGraph&) = delete;

  // Commits in all layers.
  uint32_t size() const { return total_; }
  // Layers (1 for a single file).
  size_t layers() const { return layers_.size(); }
  // Whether any layer carries Bloom filters of a known hash version.
  bool has_bloom() const;

  // The position of `oid`, or nullopt when the graph does not hold it.
  std::optional<Pos> Find(const Oid& oid) const;
  // The commit, root tree and committer time (Unix seconds) at `pos` (< size()).
  Oid CommitAt(Pos pos) const;
  Oid TreeAt(Pos pos) const;
  int64_t TimeAt(Pos pos) const;
  // Appends the parents of `pos` to `out`, first parent first. False when the data is
  // malformed (a position out of range or pointing into a higher layer, a bad EDGE run).
  bool Parents(Pos pos, std::vector<Pos>& out) const;

  // Whether the diff of `pos` against its first parent (or the empty tree) may touch the
  // path `keys` came from: false only when the commit's filter definitely excludes one of
  // the keys. No filter, an empty or unreadable one, an unknown hash version → true.
  bool MaybeChanged(Pos pos, const BloomKeys& keys) const;
  // Asks the CPU to start loading what TimeAt, Parents and MaybeChanged read for `pos`
  // (positions are in oid order, so a walk touches the file at random). No effect else.
  void Prefetch(Pos pos) const;

  struct Layer;  // one mapped graph file; defined in commit_graph.cc

 private:
  CommitGraph() = default;
  const Layer* LayerOf(Pos pos) const;

  std::vector<std::unique_ptr<Layer>> layers_;  // base first
  uint32_t total_ = 0;
};

}  // namespace hangar::git

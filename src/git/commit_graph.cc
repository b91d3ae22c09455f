#include "git/commit_graph.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace hangar::git {
namespace {

constexpr size_t kHashLen = 20;                   // SHA-1 (hash version 1)
constexpr size_t kCommitDataLen = kHashLen + 16;  // CDAT record
constexpr size_t kHeaderLen = 8;
constexpr size_t kChunkEntryLen = 12;
constexpr size_t kBloomHeaderLen = 12;
constexpr uint32_t kNoParent = 0x70000000;
constexpr uint32_t kHighBit = 0x80000000;
constexpr uint32_t kMaxPositions = 0x70000000;  // parent values from here on are special
constexpr uint32_t kMaxHashes = 64;             // git writes 7; more is nonsense
constexpr uint32_t kSeed0 = 0x293ae76f, kSeed1 = 0x7e646e2c;

uint32_t Be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
uint64_t Be64(const uint8_t* p) { return uint64_t(Be32(p)) << 32 | Be32(p + 4); }
uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
uint32_t ChunkId(const char (&id)[5]) { return Be32(reinterpret_cast<const uint8_t*>(id)); }

}  // namespace

uint32_t BloomMurmur3(std::string_view data, uint32_t seed, uint32_t version) {
  constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  // Version 1 widens each byte as a signed char: 0x80..0xff become 0xffffff80..0xffffffff
  // before the shift, so their high bits spill into the other bytes of the block.
  auto byte = [&](size_t i) -> uint32_t {
    uint8_t b = static_cast<uint8_t>(data[i]);
    return version == 1 ? uint32_t(int32_t(int8_t(b))) : uint32_t(b);
  };
  uint32_t h = seed;
  const size_t blocks = data.size() / 4;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k = byte(4 * i) | byte(4 * i + 1) << 8 | byte(4 * i + 2) << 16 | byte(4 * i + 3) << 24;
    k *= c1;
    k = Rotl(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const size_t tail = blocks * 4;
  uint32_t k = 0;
  switch (data.size() & 3) {
    case 3:
      k ^= byte(tail + 2) << 16;
      [[fallthrough]];
    case 2:
      k ^= byte(tail + 1) << 8;
      [[fallthrough]];
    case 1:
      k ^= byte(tail);
      k *= c1;
      k = Rotl(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(data.size());
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

BloomKeys::BloomKeys(std::string_view path) {
  for (;;) {
    v1_.push_back({BloomMurmur3(path, kSeed0, 1), BloomMurmur3(path, kSeed1, 1)});
    v2_.push_back({BloomMurmur3(path, kSeed0, 2), BloomMurmur3(path, kSeed1, 2)});
    size_t slash = path.rfind('/');
    if (slash == path.npos || slash == 0) break;
    path = path.substr(0, slash);
  }
}

bool BloomMaybeContains(std::span<const uint8_t> filter, const BloomKeys::Hash& key,
                        uint32_t num_hashes) {
  if (filter.empty()) return true;
  const uint64_t bits = uint64_t(filter.size()) * 8;
  for (uint32_t i = 0; i < num_hashes; ++i) {
    uint64_t bit = uint64_t(uint32_t(key.h0 + i * key.h1)) % bits;
    if (!(filter[bit / 8] & (1u << (bit % 8)))) return false;
  }
  return true;
}

// One mapped graph file and its chunks. Pointers are into the mapping; sizes are checked.
struct CommitGraph::Layer {
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint32_t first = 0;  // position of this layer's first commit
  uint32_t count = 0;
  uint32_t bases = 0;  // B: number of base layers below this one
  const uint8_t* fanout = nullptr;
  const uint8_t* oids = nullptr;
  const uint8_t* cdat = nullptr;
  const uint8_t* edge = nullptr;
  size_t edge_count = 0;
  const uint8_t* base_list = nullptr;  // B hashes
  const uint8_t* bidx = nullptr;       // set only with usable BDAT
  const uint8_t* filters = nullptr;    // BDAT after its header
  size_t filters_size = 0;
  uint32_t bloom_version = 0, num_hashes = 0;

  ~Layer() {
    if (data) ::munmap(const_cast<uint8_t*>(data), size);
  }
  const uint8_t* Record(Pos pos) const { return cdat + size_t(pos - first) * kCommitDataLen; }
};

namespace {

// Maps `path` read-only; false when it is missing, empty or unreadable.
bool MapFile(const std::string& path, const uint8_t*& data, size_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  void* p = ok ? ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (p == MAP_FAILED) return false;
  data = static_cast<const uint8_t*>(p);
  size = size_t(st.st_size);
  return true;
}

// Fills `l`'s chunk pointers from the header and chunk table (gitformat-commit-graph
// §HEADER, gitformat-chunk); false when anything is out of bounds or inconsistent.
bool ParseChunks(CommitGraph::Layer& l) {
  const uint8_t* d = l.data;
  if (l.size < kHeaderLen + kChunkEntryLen + kHashLen) return false;
  if (std::memcmp(d, "CGPH", 4) != 0 || d[4] != 1 || d[5] != 1) return false;
  const size_t chunks = d[6];
  l.bases = d[7];
  const size_t table_end = kHeaderLen + (chunks + 1) * kChunkEntryLen;
  const size_t body_end = l.size - kHashLen;  // the trailing checksum
  if (table_end > body_end) return false;
  struct Chunk {
    const uint8_t* p = nullptr;
    uint64_t len = 0;
  } oidf, oidl, cdat, edge, bidx, bdat, base;
  for (size_t i = 0; i < chunks; ++i) {
    const uint8_t* e = d + kHeaderLen + i * kChunkEntryLen;
    uint32_t id = Be32(e);
    uint64_t off = Be64(e + 4), end = Be64(e + 4 + kChunkEntryLen);
    if (id == 0 || off < table_end || end < off || end > body_end) return false;
    Chunk c{d + off, end - off};
    Chunk* slot = id == ChunkId("OIDF")   ? &oidf
                  : id == ChunkId("OIDL") ? &oidl
                  : id == ChunkId("CDAT") ? &cdat
                  : id == ChunkId("EDGE") ? &edge
                  : id == ChunkId("BIDX") ? &bidx
                  : id == ChunkId("BDAT") ? &bdat
                  : id == ChunkId("BASE") ? &base
                                          : nullptr;
    if (!slot) continue;        // GDA2, GDO2 and unknown chunks are not needed
    if (slot->p) return false;  // each id at most once
    *slot = c;
  }
  // The terminating entry: id 0, at the end of the last chunk, where the checksum starts.
  const uint8_t* last = d + kHeaderLen + chunks * kChunkEntryLen;
  if (Be32(last) != 0 || Be64(last + 4) != body_end) return false;
  if (!oidf.p || oidf.len != 256 * 4 || !oidl.p || !cdat.p) return false;
  uint32_t prev = 0;
  for (size_t b = 0; b < 256; ++b) {
    uint32_t f = Be32(oidf.p + 4 * b);
    if (f < prev) return false;
    prev = f;
  }
  l.count = prev;
  if (oidl.len != uint64_t(l.count) * kHashLen || cdat.len != uint64_t(l.count) * kCommitDataLen)
    return false;
  if (edge.len % 4 != 0) return false;
  if (l.bases != 0 && (!base.p || base.len != uint64_t(l.bases) * kHashLen)) return false;
  l.fanout = oidf.p;
  l.oids = oidl.p;
  l.cdat = cdat.p;
  l.edge = edge.p;
  l.edge_count = edge.len / 4;
  l.base_list = base.p;
  // Bloom filters: only with both chunks, a known hash version and a sane hash count.
  if (bidx.p && bdat.p && bidx.len == uint64_t(l.count) * 4 && bdat.len >= kBloomHeaderLen) {
    uint32_t version = Be32(bdat.p), hashes = Be32(bdat.p + 4);
    if ((version == 1 || version == 2) && hashes > 0 && hashes <= kMaxHashes) {
      l.bidx = bidx.p;
      l.filters = bdat.p + kBloomHeaderLen;
      l.filters_size = bdat.len - kBloomHeaderLen;
      l.bloom_version = version;
      l.num_hashes = hashes;
    }
  }
  return true;
}

std::unique_ptr<CommitGraph::Layer> LoadLayer(const std::string& path) {
  auto l = std::make_unique<CommitGraph::Layer>();
  if (!MapFile(path, l->data, l->size)) return nullptr;
  if (!ParseChunks(*l)) return nullptr;
  return l;
}

}  // namespace

std::unique_ptr<CommitGraph> CommitGraph::Open(const std::string& repo) {
  const std::string info = repo + "/objects/info/";
  std::unique_ptr<CommitGraph> g(new CommitGraph);
  // git reads the single file first, then a chain.
  if (auto single = LoadLayer(info + "commit-graph")) {
    if (single->bases != 0) return nullptr;
    g->total_ = single->count;
    if (g->total_ >= kMaxPositions) return nullptr;
    g->layers_.push_back(std::move(single));
    return g;
  }
  std::ifstream chain(info + "commit-graphs/commit-graph-chain");
  if (!chain) return nullptr;
  std::vector<Oid> hashes;
  for (std::string line; std::getline(chain, line);) {
    auto hash = Oid::ParseHex(line);
    if (!hash) return nullptr;
    auto l = LoadLayer(info + "commit-graphs/graph-" + line + ".graph");
    // Layer i names the i layers below it (BASE) and ends with its own hash.
    bool ok = l && l->bases == hashes.size() &&
              std::memcmp(l->data + l->size - kHashLen, hash->bytes.data(), kHashLen) == 0;
    for (size_t i = 0; ok && i < hashes.size(); ++i)
      ok = std::memcmp(l->base_list + i * kHashLen, hashes[i].bytes.data(), kHashLen) == 0;
    if (!ok || uint64_t(g->total_) + l->count >= kMaxPositions) return nullptr;
    l->first = g->total_;
    g->total_ += l->count;
    hashes.push_back(*hash);
    g->layers_.push_back(std::move(l));
  }
  if (g->layers_.empty()) return nullptr;
  return g;
}

CommitGraph::~CommitGraph() = default;

bool CommitGraph::has_bloom() const {
  for (const auto& l : layers_)
    if (l->bidx) return true;
  return false;
}

const CommitGraph::Layer* CommitGraph::LayerOf(Pos pos) const {
  for (size_t i = layers_.size(); i-- > 0;)
    if (pos >= layers_[i]->first) return layers_[i].get();
  return layers_.front().get();
}

std::optional<CommitGraph::Pos> CommitGraph::Find(const Oid& oid) const {
  for (const auto& l : layers_) {
    const uint8_t b = oid.bytes[0];
    uint32_t lo = b == 0 ? 0 : Be32(l->fanout + 4 * (b - 1)), hi = Be32(l->fanout + 4 * b);
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      int c = std::memcmp(l->oids + size_t(mid) * kHashLen, oid.bytes.data(), kHashLen);
      if (c == 0) return l->first + mid;
      if (c < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  }
  return std::nullopt;
}

Oid CommitGraph::CommitAt(Pos pos) const {
  const Layer* l = LayerOf(pos);
  Oid oid;
  std::memcpy(oid.bytes.data(), l->oids + size_t(pos - l->first) * kHashLen, kHashLen);
  return oid;
}

Oid CommitGraph::TreeAt(Pos pos) const {
  Oid oid;
  std::memcpy(oid.bytes.data(), LayerOf(pos)->Record(pos), kHashLen);
  return oid;
}

int64_t CommitGraph::TimeAt(Pos pos) const {
  const uint8_t* r = LayerOf(pos)->Record(pos) + kHashLen + 8;
  return int64_t(uint64_t(Be32(r) & 3) << 32 | Be32(r + 4));
}

bool CommitGraph::Parents(Pos pos, std::vector<Pos>& out) const {
  const Layer* l = LayerOf(pos);
  const uint8_t* r = l->Record(pos) + kHashLen;
  const uint64_t limit = uint64_t(l->first) + l->count;  // parents are in this layer or below
  uint32_t p1 = Be32(r), p2 = Be32(r + 4);
  if (p1 == kNoParent) return p2 == kNoParent;
  if (p1 >= limit) return false;
  out.push_back(p1);
  if (p2 == kNoParent) return true;
  if (!(p2 & kHighBit)) {
    if (p2 >= limit) return false;
    out.push_back(p2);
    return true;
  }
  for (size_t e = p2 & ~kHighBit; e < l->edge_count; ++e) {  // octopus: an EDGE run
    uint32_t v = Be32(l->edge + 4 * e);
    if ((v & ~kHighBit) >= limit) return false;
    out.push_back(v & ~kHighBit);
    if (v & kHighBit) return true;
  }
  return false;  // the run leaves the chunk
}

void CommitGraph::Prefetch(Pos pos) const {
  const Layer* l = LayerOf(pos);
  __builtin_prefetch(l->Record(pos) + kHashLen);
  if (l->bidx) __builtin_prefetch(l->bidx + 4 * size_t(pos - l->first));
}

bool CommitGraph::MaybeChanged(Pos pos, const BloomKeys& keys) const {
  const Layer* l = LayerOf(pos);
  if (!l->bidx) return true;
  const size_t i = pos - l->first;
  const uint32_t end = Be32(l->bidx + 4 * i), begin = i == 0 ? 0 : Be32(l->bidx + 4 * (i - 1));
  if (begin > end || end > l->filters_size) return true;
  std::span<const uint8_t> filter(l->filters + begin, end - begin);
  for (const auto& key : keys.For(l->bloom_version))
    if (!BloomMaybeContains(filter, key, l->num_hashes)) return false;
  return true;
}

}  // namespace hangar::git

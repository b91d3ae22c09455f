#pragma once
// TtlCache: a bounded map whose entries expire, for results that may change underneath
// (tokens, memberships, repo rows) and may be served a little stale. Split into shards so
// concurrent requests rarely contend on one mutex. When a shard is full, expired entries
// go first, then any entry. (LruCache, core/lru.h, is for results that never change.)

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace hangar {

// Holds at most about `capacity` entries (split evenly over the shards), each live for
// `ttl_ms` milliseconds after its Put; a ttl of 0 or less keeps nothing. Times are given
// by the caller (unix milliseconds), so tests control the clock. Thread-safe.
template <typename V>
class TtlCache {
 public:
  TtlCache(size_t capacity, int64_t ttl_ms)
      : per_shard_(std::max<size_t>(1, capacity / kShards)), ttl_ms_(ttl_ms) {}

  // Calls fn(V&) under the shard lock when `key` is live; returns whether it was.
  template <typename F>
  bool Visit(const std::string& key, int64_t now_ms, F&& fn) {
    Shard& s = ShardFor(key);
    std::lock_guard lock(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) return false;
    if (it->second.expires_ms <= now_ms) {
      s.map.erase(it);
      return false;
    }
    fn(it->second.value);
    return true;
  }

  void Put(const std::string& key, V value, int64_t now_ms) {
    if (ttl_ms_ <= 0) return;
    Shard& s = ShardFor(key);
    std::lock_guard lock(s.mu);
    if (s.map.size() >= per_shard_ && !s.map.count(key)) {
      std::erase_if(s.map, [&](const auto& kv) { return kv.second.expires_ms <= now_ms; });
      if (s.map.size() >= per_shard_) s.map.erase(s.map.begin());
    }
    s.map[key] = Entry{std::move(value), now_ms + ttl_ms_};
  }

  // A copy of the live value of `key`, or nullopt.
  std::optional<V> Get(const std::string& key, int64_t now_ms) {
    std::optional<V> out;
    Visit(key, now_ms, [&](V& v) { out = v; });
    return out;
  }

  void Erase(const std::string& key) {
    Shard& s = ShardFor(key);
    std::lock_guard lock(s.mu);
    s.map.erase(key);
  }

  // Drops every entry.
  void Clear() {
    for (Shard& s : shards_) {
      std::lock_guard lock(s.mu);
      s.map.clear();
    }
  }

 private:
  static constexpr size_t kShards = 16;
  struct Entry {
    V value;
    int64_t expires_ms;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> map;
  };
  Shard& ShardFor(const std::string& key) {
    return shards_[std::hash<std::string>{}(key) % kShards];
  }

  const size_t per_shard_;
  const int64_t ttl_ms_;
  std::array<Shard, kShards> shards_;
};

}  // namespace hangar

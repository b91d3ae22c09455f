#pragma once
// LruCache: a thread-safe least-recently-used map for results that never change once
// computed (keyed by immutable oids), bounded by total weight (bytes, or 1 per entry).

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace hangar {

// Holds values of total weight at most `capacity`; capacity 0 keeps nothing, nor is a value
// heavier than the whole capacity kept. Get copies the value out (use shared_ptr values
// for large results).
template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  std::optional<V> Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    items_.splice(items_.begin(), items_, it->second);
    return it->second->value;
  }

  // Inserts or replaces `key`, then evicts the least recently used entries over capacity.
  void Put(const std::string& key, V value, size_t weight = 1) {
    if (weight > capacity_) return;
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      weight_ -= it->second->weight;
      items_.erase(it->second);
      index_.erase(it);
    }
    items_.push_front(Item{key, std::move(value), weight});
    index_[key] = items_.begin();
    weight_ += weight;
    while (weight_ > capacity_) {
      weight_ -= items_.back().weight;
      index_.erase(items_.back().key);
      items_.pop_back();
    }
  }

 private:
  struct Item {
    std::string key;
    V value;
    size_t weight;
  };
  using Items = std::list<Item>;
  std::mutex mu_;
  const size_t capacity_;
  size_t weight_ = 0;
  Items items_;
  std::unordered_map<std::string, typename Items::iterator> index_;
};

}  // namespace hangar

#pragma once
// ChangeFeed: what one process changed, told to every process on the same database so
// their caches drop what went stale (issue 17 §2: a revoked token, a repo made private,
// an org member removed are honoured by every replica at once, not after a cache's TTL).
// A change is a topic ("token", "repo", ...) and a key within it; "" as the key means
// anything of the topic may have changed (after the feed lost its connection, say).
//
// The base class is the feed of one process (SQLite): Publish calls this process's
// listeners. PostgreSQL's (db/postgres/pg_change_feed.h) also sends the change with NOTIFY
// and calls the listeners for the other processes' changes on its own thread.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace hangar::db {

class ChangeFeed {
 public:
  // Called with the changed key (or "" for all); must be quick, must not throw and must
  // not publish or subscribe (it runs under the feed's lock).
  using Listener = std::function<void(std::string_view key)>;

  // A listener's registration: unsubscribes when destroyed (after which the listener is
  // never called again). Move-only; a default one holds nothing.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& o) noexcept : feed_(o.feed_), id_(o.id_) { o.feed_ = nullptr; }
    Subscription& operator=(Subscription&& o) noexcept;
    ~Subscription();

   private:
    friend class ChangeFeed;
    Subscription(ChangeFeed* feed, uint64_t id) : feed_(feed), id_(id) {}
    ChangeFeed* feed_ = nullptr;
    uint64_t id_ = 0;
  };

  ChangeFeed() = default;
  virtual ~ChangeFeed() = default;
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  // Calls `topic`'s listeners here and tells the other processes. Call it after the
  // change is committed. Never fails: a change that cannot be sent is logged, and other
  // processes' caches then expire on their own (their TTLs are the bound).
  virtual void Publish(std::string_view topic, std::string_view key);
  // Adds a listener of `topic` until the Subscription is destroyed (thread-safe). Keep the
  // Subscription a member of what the listener touches, declared after it.
  [[nodiscard]] Subscription Subscribe(std::string topic, Listener listener);

 protected:
  // Calls `topic`'s listeners with `key`; "" as `topic` calls every listener with "".
  void Deliver(std::string_view topic, std::string_view key);

 private:
  struct Entry {
    uint64_t id;
    std::string topic;
    Listener listener;
  };
  void Unsubscribe(uint64_t id);

  std::mutex mu_;
  std::vector<Entry> listeners_;  // guarded by mu_; a handful, so a vector
  uint64_t next_id_ = 1;          // guarded by mu_
};

// Subscribes `cache` (a core/ttl_cache.h cache) to `topic`
// on `feed`: a changed key is erased from it, "" clears it.
template <typename Cache>
ChangeFeed::Subscription EvictOnChange(ChangeFeed& feed, std::string topic, Cache& cache) {
  return feed.Subscribe(std::move(topic), [&cache](std::string_view key) {
    if (key.empty()) {
      cache.Clear();
    } else {
      cache.Erase(std::string(key));
    }
  });
}

}  // namespace hangar::db

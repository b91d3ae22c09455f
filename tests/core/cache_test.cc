// The two caches of core/: LruCache (immutable results, bounded by weight) and TtlCache
// (results that may change, bounded by count and age).

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/lru.h"
#include "core/ttl_cache.h"

namespace hangar {
namespace {

TEST(LruCache, EvictsTheLeastRecentlyUsedOverItsWeight) {
  LruCache<std::string> cache(10);
  cache.Put("a", "1", 4);
  cache.Put("b", "2", 4);
  ASSERT_EQ(cache.Get("a"), "1");  // a is now the most recent
  cache.Put("c", "3", 4);          // 12 > 10: b goes
  EXPECT_EQ(cache.Get("a"), "1");
  EXPECT_EQ(cache.Get("b"), std::nullopt);
  EXPECT_EQ(cache.Get("c"), "3");
  cache.Put("huge", "x", 11);  // heavier than the whole capacity: not kept
  EXPECT_EQ(cache.Get("huge"), std::nullopt);
  EXPECT_EQ(cache.Get("a"), "1");
}

TEST(TtlCache, EntriesLiveForTheirTtl) {
  TtlCache<int> cache(100, 1000);
  cache.Put("k", 7, 5000);
  EXPECT_EQ(cache.Get("k", 5999), 7);
  EXPECT_EQ(cache.Get("k", 6000), std::nullopt);  // expired, and dropped
  EXPECT_EQ(cache.Get("k", 5500), std::nullopt);
  cache.Put("k", 8, 6000);
  int seen = 0;
  EXPECT_TRUE(cache.Visit("k", 6001, [&](int& v) { seen = v++; }));
  EXPECT_EQ(seen, 8);
  EXPECT_EQ(cache.Get("k", 6002), 9);  // Visit may change the entry in place
}

TEST(TtlCache, EraseClearAndAZeroTtl) {
  TtlCache<int> cache(100, 1000);
  cache.Put("a", 1, 0);
  cache.Put("b", 2, 0);
  cache.Erase("a");
  EXPECT_EQ(cache.Get("a", 1), std::nullopt);
  EXPECT_EQ(cache.Get("b", 1), 2);
  cache.Clear();
  EXPECT_EQ(cache.Get("b", 1), std::nullopt);
  TtlCache<int> off(100, 0);
  off.Put("a", 1, 0);
  EXPECT_EQ(off.Get("a", 0), std::nullopt);
}

TEST(TtlCache, StaysBoundedAndDropsExpiredEntriesFirst) {
  TtlCache<int> cache(16, 1000);  // one entry per shard
  for (int i = 0; i < 1000; ++i) cache.Put("k" + std::to_string(i), i, 0);
  int live = 0;
  for (int i = 0; i < 1000; ++i) live += cache.Get("k" + std::to_string(i), 1).has_value();
  EXPECT_LE(live, 16);
  EXPECT_GE(live, 1);
  // Concurrent use from several threads keeps every value it returns intact.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string key = "t" + std::to_string((i + t) % 50);
        cache.Put(key, i, 10);
        if (auto v = cache.Get(key, 11)) EXPECT_GE(*v, 0);
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace hangar

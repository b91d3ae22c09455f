// The change feed (db/change_feed.h): a change published by one opener of a database is
// heard by this process's listeners at once and, on PostgreSQL, by every other opener of
// the same database (another replica) within a second; never by a database in another
// schema, and never twice by its publisher.
#include "db/change_feed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/ttl_cache.h"
#include "db/test_db.h"

namespace hangar::db {
namespace {

using namespace std::chrono_literals;

// What a listener heard, waited for from the test's thread.
class Heard {
 public:
  ChangeFeed::Listener Listener() {
    return [this](std::string_view key) {
      std::lock_guard lock(mu_);
      keys_.emplace_back(key);
      cv_.notify_all();
    };
  }
  // Waits up to `within` for at least `n` keys; returns what was heard by then.
  std::vector<std::string> WaitFor(size_t n, std::chrono::milliseconds within = 2000ms) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, within, [&] { return keys_.size() >= n; });
    return keys_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> keys_;
};

class ChangeFeedTest : public testing::StoreTest {};

TEST_P(ChangeFeedTest, PublisherHearsItsOwnChangeOnceAtOnce) {
  Heard tokens, repos;
  auto t = stores_.changes->Subscribe("token", tokens.Listener());
  auto r = stores_.changes->Subscribe("repo", repos.Listener());
  stores_.changes->Publish("token", "abc");
  // Delivered before Publish returns, to the topic's listeners only.
  EXPECT_EQ(tokens.WaitFor(1, 0ms), std::vector<std::string>{"abc"});
  EXPECT_TRUE(repos.WaitFor(1, 0ms).empty());
  // Its NOTIFY comes back to its own connection too; it is not delivered a second time.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(tokens.WaitFor(2, 0ms).size(), 1u);
}

TEST_P(ChangeFeedTest, UnsubscribedListenerHearsNothing) {
  Heard heard;
  {
    auto s = stores_.changes->Subscribe("token", heard.Listener());
    stores_.changes->Publish("token", "one");
  }
  stores_.changes->Publish("token", "two");
  EXPECT_EQ(heard.WaitFor(2, 300ms), std::vector<std::string>{"one"});
}

TEST_P(ChangeFeedTest, EvictOnChangeErasesTheKey) {
  TtlCache<int> cache(16, 60'000);
  cache.Put("a", 1, 0);
  cache.Put("b", 2, 0);
  auto s = EvictOnChange(*stores_.changes, "token", cache);
  stores_.changes->Publish("token", "a");
  EXPECT_FALSE(cache.Get("a", 1).has_value());
  EXPECT_TRUE(cache.Get("b", 1).has_value());
  stores_.changes->Publish("token", "");  // anything of the topic: the cache is cleared
  EXPECT_FALSE(cache.Get("b", 1).has_value());
}

TEST_P(ChangeFeedTest, AnotherOpenerOfTheDatabaseHearsTheChange) {
  if (GetParam() == SqlDialect::Sqlite) {
    GTEST_SKIP() << "one process per SQLite database: its feed is the process's own";
  }
  auto replica = OpenAgain();
  ASSERT_TRUE(replica.has_value()) << replica.error().message;
  Heard heard;
  auto s = replica->changes->Subscribe("token", heard.Listener());

  auto start = std::chrono::steady_clock::now();
  stores_.changes->Publish("token", "deadbeef");
  EXPECT_EQ(heard.WaitFor(1, 1000ms), std::vector<std::string>{"deadbeef"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 1000ms);
}

TEST_P(ChangeFeedTest, ADatabaseInAnotherSchemaHearsNothing) {
  if (GetParam() == SqlDialect::Sqlite) GTEST_SKIP() << "PostgreSQL's channels only";
  testing::StoreFixture other;
  other.OpenFresh(SqlDialect::Postgres);  // a schema of its own on the same server
  auto replica = OpenAgain();
  ASSERT_TRUE(replica.has_value()) << replica.error().message;
  Heard mine, theirs;
  auto a = replica->changes->Subscribe("repo", mine.Listener());
  auto b = other.stores_.changes->Subscribe("repo", theirs.Listener());
  stores_.changes->Publish("repo", "model/acme/bert");
  EXPECT_EQ(mine.WaitFor(1), std::vector<std::string>{"model/acme/bert"});
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(theirs.WaitFor(1, 0ms).empty());
  b = {};
  other.CloseAndRemove();
}

INSTANTIATE_TEST_SUITE_P(Engines, ChangeFeedTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

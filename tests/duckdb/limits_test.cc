// Deadlines, the memory limit, the result cap, and queries from several threads at once.
// Deadline tests assert the error a query returns, never how long it took.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "duckdb/engine.h"
#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using ::testing::HasSubstr;
using testing::TestDir;
using testing::TestOptions;

// Runs for minutes unless interrupted: a cross join of 10^13 pairs that yields one row.
constexpr const char* kEndless =
    "SELECT count(*) FROM range(10000000) a, range(1000000) b WHERE a.range + b.range = -1";

Query Endless(std::chrono::milliseconds timeout) {
  Query q(kEndless);
  q.timeout = timeout;
  return q;
}

TEST(DuckDbLimits, AQueryPastItsDeadlineIsInterrupted) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.max_connections = 1;  // the next query reuses the interrupted connection
  auto engine = Engine::Open(o).value();
  auto r = engine->Run(Endless(std::chrono::milliseconds(300)));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(r.error().message, HasSubstr("took too long"));
  EXPECT_THAT(r.error().message, HasSubstr("300 ms"));
  // No interrupt lingers for the connection's next query.
  for (int i = 0; i < 20; ++i) {
    auto next = engine->Run(Query("SELECT sum(range) FROM range(1000000)"));
    ASSERT_TRUE(next.has_value()) << next.error().message;
  }
}

TEST(DuckDbLimits, TheEnginesDefaultTimeoutApplies) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.default_timeout = std::chrono::milliseconds(200);
  auto engine = Engine::Open(o).value();
  auto r = engine->Run(Query(kEndless));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(r.error().message, HasSubstr("200 ms"));
}

TEST(DuckDbLimits, WaitingForABusyConnectionCountsTowardsTheDeadline) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.max_connections = 1;
  auto engine = Engine::Open(o).value();
  std::atomic<bool> done{false};
  std::thread busy([&] {
    (void)engine->Run(Endless(std::chrono::milliseconds(1500)));
    done = true;
  });
  // Until the endless query holds the one connection, the quick ones get it; then one waits
  // for it and fails at its own deadline.
  Result<QueryResult> r = QueryResult{};
  while (r.has_value() && !done) {
    Query q("SELECT 1");
    q.timeout = std::chrono::milliseconds(100);
    r = engine->Run(q);
  }
  busy.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(r.error().message, HasSubstr("busy"));
}

TEST(DuckDbLimits, AQueryOverTheMemoryLimitFailsAndTheEngineStaysUsable) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.memory_limit_bytes = 64ull << 20;
  auto engine = Engine::Open(o).value();
  // An aggregate that cannot spill: one string of 20 million numbers.
  auto r =
      engine->Run(Query("SELECT length(string_agg(range::VARCHAR, ',')) FROM range(20000000)"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_THAT(r.error().message, HasSubstr("Out of Memory"));
  EXPECT_THAT(r.error().message, ::testing::Not(HasSubstr("Possible solutions")));
  auto after = engine->Run(Query("SELECT count(*) FROM range(1000)"));
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_EQ(testing::Int(*after), 1000);
}

TEST(DuckDbLimits, AResultOverItsCapFailsOrIsTruncated) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string())).value();
  Query q("SELECT repeat('x', 1000) AS s FROM range(100000)");
  q.max_result_bytes = 100'000;
  auto fail = engine->Run(q);
  ASSERT_FALSE(fail.has_value());
  EXPECT_EQ(fail.error().code, ErrorCode::PayloadTooLarge);
  EXPECT_THAT(fail.error().message, HasSubstr("100000 bytes"));
  q.on_cap = OnCap::Truncate;
  auto cut = engine->Run(q);
  ASSERT_TRUE(cut.has_value()) << cut.error().message;
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->rows.size(), 98u);  // 1016 bytes a row
  EXPECT_LE(cut->bytes, 100'000u);
  Query small("SELECT 1");
  small.on_cap = OnCap::Truncate;
  EXPECT_FALSE(engine->Run(small)->truncated);
}

TEST(DuckDbLimits, QueriesFromManyThreadsAllAnswer) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.max_connections = 3;
  auto engine = Engine::Open(o).value();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        int64_t n = 1000 + t * 100 + i;
        auto r = engine->Run(Query("SELECT sum(range) FROM range(?)", {n}));
        if (!r.has_value() || std::get<int64_t>(r->rows[0][0]) != n * (n - 1) / 2) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(DuckDbLimits, ALongQueryDoesNotHoldUpOthers) {
  TestDir dir;
  EngineOptions o = TestOptions(dir.path().string());
  o.max_connections = 2;
  auto engine = Engine::Open(o).value();
  std::atomic<bool> long_started{false}, long_done{false};
  std::thread slow([&] {
    long_started = true;
    (void)engine->Run(Endless(std::chrono::milliseconds(2000)));
    long_done = true;
  });
  while (!long_started) std::this_thread::yield();
  // The quick queries finish on the second connection while the first is still busy.
  for (int i = 0; i < 10; ++i) {
    auto r = engine->Run(Query("SELECT 42"));
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  EXPECT_FALSE(long_done.load());
  slow.join();
}

}  // namespace
}  // namespace hangar::duckdb

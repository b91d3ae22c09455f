// The server's plain checks of a request head (http/server_conn.cc): which Host values may
// go into absolute URLs.

#include <gtest/gtest.h>

#include "http/server_internal.h"

namespace hangar::http {
namespace {

TEST(ValidHost, NamesAddressesAndPorts) {
  for (const char* ok : {"", "hub", "hub.example.org", "127.0.0.1", "127.0.0.1:8080", "my_host:1",
                         "[::1]", "[::1]:8080", "[2001:db8::7]:443", "hub:"}) {
    EXPECT_TRUE(ValidHost(ok)) << ok;
  }
}

TEST(ValidHost, AnythingElseIsRefused) {
  for (const char* bad :
       {"[::1", "::1", "[]", "[::1]x", "[::1]:80:81", "[fe80::1%eth0]", "a:b:c", "hub:80x",
        "hub:123456", "evil.example/phish?", "a b", "hub@evil", "[::1]]", "x]:80", "hub\\evil"}) {
    EXPECT_FALSE(ValidHost(bad)) << bad;
  }
  EXPECT_FALSE(ValidHost(std::string(256, 'a')));
}

}  // namespace
}  // namespace hangar::http

namespace hangar::http {
namespace {

// Each job gets a thread of its own, also when idle threads are reused: two jobs handed
// out while one thread is idle run at the same time (neither waits behind the other).
TEST(BodyThreads, ReusedThreadsStillRunJobsSideBySide) {
  asio::thread_pool fallback(1);
  BodyThreads threads(8, fallback);
  std::promise<void> first_done;
  ASSERT_TRUE(threads.TryReserve());
  threads.Start([&] { first_done.set_value(); });
  first_done.get_future().wait();  // now one thread is idle
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::promise<void> both_started;
  auto job = [&] {
    int now = ++running;
    most = std::max(most.load(), now);
    if (now == 2) both_started.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    --running;
  };
  ASSERT_TRUE(threads.TryReserve());
  threads.Start(job);
  ASSERT_TRUE(threads.TryReserve());
  threads.Start(job);
  auto started = both_started.get_future();
  EXPECT_EQ(started.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  threads.Join();
  EXPECT_EQ(most.load(), 2);
}

}  // namespace
}  // namespace hangar::http

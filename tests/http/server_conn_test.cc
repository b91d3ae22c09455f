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

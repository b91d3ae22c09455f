// net/address.h: which addresses a web import may reach (issue 13, SSRF through /import).

#include "net/address.h"

#include <gtest/gtest.h>

namespace hangar::net {
namespace {

TEST(IsPublicAddress, RefusesEveryNonPublicRange) {
  for (const char* ip : {"0.0.0.0",
                         "0.1.2.3",
                         "10.0.0.1",
                         "100.64.0.1",
                         "127.0.0.1",
                         "127.255.255.254",
                         "169.254.169.254",
                         "172.16.0.1",
                         "172.31.255.255",
                         "192.0.0.8",
                         "192.0.2.1",
                         "192.168.1.1",
                         "198.18.0.1",
                         "198.51.100.7",
                         "203.0.113.9",
                         "224.0.0.1",
                         "239.255.255.250",
                         "240.0.0.1",
                         "255.255.255.255",
                         "::",
                         "::1",
                         "::127.0.0.1",
                         "::ffff:127.0.0.1",
                         "::ffff:10.0.0.1",
                         "::ffff:169.254.169.254",
                         "64:ff9b::a00:1",
                         "2002:7f00:1::",
                         "fc00::1",
                         "fd12:3456::1",
                         "fe80::1",
                         "febf::1",
                         "fec0::1",
                         "ff02::1",
                         "2001:db8::1",
                         "100::1"}) {
    EXPECT_FALSE(IsPublicAddress(ip)) << ip;
  }
}

TEST(IsPublicAddress, AcceptsOrdinaryInternetHosts) {
  for (const char* ip :
       {"1.1.1.1", "8.8.8.8", "93.184.216.34", "172.15.255.255", "172.32.0.1", "100.63.255.255",
        "100.128.0.1", "169.253.0.1", "192.169.0.1", "2606:4700::1111", "2a00:1450:4001::200e",
        "::ffff:8.8.8.8", "2002:808:808::"}) {
    EXPECT_TRUE(IsPublicAddress(ip)) << ip;
  }
}

TEST(IsPublicAddress, RefusesWhatDoesNotParse) {
  for (const char* ip : {"", "localhost", "1.2.3", "1.2.3.4.5", "::g", "fe80::1%eth0"}) {
    EXPECT_FALSE(IsPublicAddress(ip)) << ip;
  }
}

TEST(ParseUrlHost, GivesHostAndPortWithTheSchemesDefaults) {
  struct Case {
    const char* url;
    const char* scheme;
    const char* host;
    uint16_t port;
  };
  for (const Case& c : {Case{"https://Git.Example.COM/a/b.git", "https", "git.example.com", 443},
                        Case{"http://user:pw@10.0.0.7:8080/x", "http", "10.0.0.7", 8080},
                        Case{"git://[::1]/r.git", "git", "::1", 9418},
                        Case{"ssh://git@host.example/r.git", "ssh", "host.example", 22}}) {
    auto h = ParseUrlHost(c.url);
    ASSERT_TRUE(h.has_value()) << c.url << ": " << h.error().message;
    EXPECT_EQ(h->scheme, c.scheme) << c.url;
    EXPECT_EQ(h->host, c.host) << c.url;
    EXPECT_EQ(h->port, c.port) << c.url;
  }
}

TEST(ParseUrlHost, RefusesOtherSchemesAndOddHosts) {
  for (const char* url :
       {"ftp://example.com/x", "file:///etc/passwd", "http:///x", "not a url",
        "http://exa mple.com/", "http://[fe80::1%25eth0]/x", "http://host:99999/x"}) {
    auto h = ParseUrlHost(url);
    ASSERT_FALSE(h.has_value()) << url;
    EXPECT_EQ(h.error().code, ErrorCode::BadRequest) << url;
  }
}

TEST(WithHost, PutsTheAddressInPlaceOfTheName) {
  EXPECT_EQ(WithHost("git://example.com:9000/r.git", "93.184.216.34").value(),
            "git://93.184.216.34:9000/r.git");
  EXPECT_EQ(WithHost("git://example.com/r.git", "2606:4700::1111").value(),
            "git://[2606:4700::1111]/r.git");
}

TEST(ResolveHost, ResolvesNumericHostsAndLocalhostWithoutTheNetwork) {
  EXPECT_EQ(ResolveHost("127.0.0.1").value(), std::vector<std::string>{"127.0.0.1"});
  // inet_aton's forms reach the same address; the check sees what the resolver gives.
  EXPECT_EQ(ResolveHost("0x7f.1").value(), std::vector<std::string>{"127.0.0.1"});
  auto local = ResolveHost("localhost");
  ASSERT_TRUE(local.has_value()) << local.error().message;
  for (const auto& a : *local) EXPECT_FALSE(IsPublicAddress(a)) << a;
  EXPECT_EQ(ResolveHost("no-such-host.invalid").error().code, ErrorCode::BadRequest);
}

}  // namespace
}  // namespace hangar::net

#include "services/auth/ticket.h"

#include <gtest/gtest.h>

#include <string>

namespace hangar::services {
namespace {

constexpr std::string_view kKey = "0123456789abcdef0123456789abcdef";

TicketClaims Claims() {
  TicketClaims c;
  c.repo_id = 42;
  c.user_id = 7;
  c.oid = Sha256::Of("hello");
  c.size = 5;
  c.op = TicketOp::Upload;
  c.expires_at = 1'000'000;
  return c;
}

TEST(Ticket, RoundTripsAndIsUrlSafe) {
  std::string t = IssueTicket(kKey, Claims());
  EXPECT_EQ(t.size(), 132u);
  for (char c : t) {
    EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << t;
  }
  auto v = VerifyTicket(kKey, t, 999'999);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(*v, Claims());

  TicketClaims d = Claims();
  d.op = TicketOp::Download;
  d.repo_id = -1;  // any int64 survives the encoding
  d.user_id = INT64_MIN;
  d.size = UINT64_MAX;
  auto w = VerifyTicket(kKey, IssueTicket(kKey, d), 0);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, d);
}

TEST(Ticket, EveryTamperedCharacterIsRejected) {
  std::string t = IssueTicket(kKey, Claims());
  for (size_t i = 0; i < t.size(); ++i) {
    std::string bad = t;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    auto v = VerifyTicket(kKey, bad, 0);
    ASSERT_FALSE(v.has_value()) << "position " << i;
    EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  }
}

TEST(Ticket, OtherKeyIsRejected) {
  std::string t = IssueTicket(kKey, Claims());
  auto v = VerifyTicket("another key", t, 0);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
}

TEST(Ticket, ExpiresAtItsSecond) {
  std::string t = IssueTicket(kKey, Claims());
  EXPECT_TRUE(VerifyTicket(kKey, t, 999'999).has_value());
  auto v = VerifyTicket(kKey, t, 1'000'000);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  EXPECT_NE(v.error().message.find("expired"), std::string::npos);
}

TEST(Ticket, MalformedIsRejected) {
  std::string t = IssueTicket(kKey, Claims());
  for (std::string bad : {std::string(), std::string("abc"), std::string(132, '!'),
                          t.substr(0, 131), t + "A", t.substr(0, 128)}) {
    auto v = VerifyTicket(kKey, bad, 0);
    ASSERT_FALSE(v.has_value()) << bad;
    EXPECT_EQ(v.error().code, ErrorCode::Unauthorized);
  }
}

TEST(Ticket, EmptyKeyNeverVerifies) {
  std::string t = IssueTicket("", Claims());
  EXPECT_FALSE(VerifyTicket("", t, 0).has_value());
}

}  // namespace
}  // namespace hangar::services

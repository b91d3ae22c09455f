#include "services/auth/authenticator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/sha256.h"
#include "services/auth_fixture.h"

namespace hangar::services {
namespace {

std::string Base64(std::string_view in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += k[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// Tokens: Authenticate with its cache, token management, whoami.
class AuthenticatorTest : public testing::AuthTest {};

TEST_F(AuthenticatorTest, EmptyHeaderIsAnonymous) {
  auto p = authenticator_->Authenticate("");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->anonymous);
  EXPECT_FALSE(p->CanWrite());
}

TEST_F(AuthenticatorTest, BearerTokenGivesFullPrincipal) {
  std::string token = UserWithToken("alice", TokenRole::Write, true);
  ASSERT_EQ(token.size(), 37u);
  EXPECT_EQ(token.substr(0, 3), "hf_");
  for (char c : token.substr(3)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)));

  Principal p = Auth(token);
  EXPECT_FALSE(p.anonymous);
  EXPECT_EQ(p.name, "alice");
  EXPECT_EQ(p.user_id, stores_.users->FindUserByName("alice")->id);
  EXPECT_TRUE(p.is_admin);
  EXPECT_EQ(p.role, TokenRole::Write);
  EXPECT_TRUE(p.CanWrite());
  EXPECT_EQ(p.token_name, "laptop");
  EXPECT_GT(p.token_id, 0);
  EXPECT_EQ(p.token_created_at, 1700000000);
  // Scheme names are case-insensitive (Python sends lower-case header names, some clients
  // lower-case schemes too).
  EXPECT_EQ(authenticator_->Authenticate("bearer " + token)->name, "alice");
}

TEST_F(AuthenticatorTest, BasicWithAnyUserAndTokenAsPassword) {
  std::string token = UserWithToken("alice", TokenRole::Read);
  for (std::string user : {"hf_user", "alice", "", "x"}) {
    auto p = authenticator_->Authenticate("Basic " + Base64(user + ":" + token));
    ASSERT_TRUE(p.has_value()) << user;
    EXPECT_EQ(p->name, "alice");
    EXPECT_EQ(p->role, TokenRole::Read);
  }
  // Unpadded base64 is accepted too.
  std::string padded = Base64("ab:" + token);  // 40 bytes: two padding characters
  std::string unpadded = padded.substr(0, padded.find('='));
  ASSERT_NE(padded, unpadded);
  EXPECT_TRUE(authenticator_->Authenticate("Basic " + unpadded).has_value());
}

TEST_F(AuthenticatorTest, MalformedOrWrongCredentialsAreUnauthorized) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  ExpectUnauthorized("Bearer hf_doesnotexist0000000000000000000");
  ExpectUnauthorized("Bearer ");
  ExpectUnauthorized("Bearer");
  ExpectUnauthorized("Token " + token);
  ExpectUnauthorized(token);
  ExpectUnauthorized("Basic !!!notbase64");
  ExpectUnauthorized("Basic " + Base64(token));               // no user:password colon
  ExpectUnauthorized("Basic " + Base64("u:"));                // empty password
  ExpectUnauthorized("Basic " + Base64("u:" + token) + "A");  // bad length
  ExpectUnauthorized("Basic " + Base64("u:" + token + "x"));
  ExpectUnauthorized("Bearer " + std::string(600, 'a'));
}

TEST_F(AuthenticatorTest, OnlyTheTokenHashIsStored) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  stores_ = db::Stores{};  // close connections so everything is on disk
  std::string bytes;
  for (const char* suffix : {"", "-wal"}) {
    std::ifstream f(dir_ / (std::string("hangar.db") + suffix), std::ios::binary);
    bytes.append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find(token), std::string::npos);
  EXPECT_EQ(bytes.find(token.substr(3)), std::string::npos);
  EXPECT_NE(bytes.find(Sha256::Of(token).Hex()), std::string::npos);
}

TEST_F(AuthenticatorTest, RepeatedTokensAreServedFromCacheAndTouchedOncePerMinute) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  for (int i = 0; i < 100; ++i) Auth(token);
  EXPECT_EQ(counting_->token_lookups.load(), 1);
  EXPECT_EQ(counting_->touches.load(), 1);
  auto rec = stores_.users->FindTokenByHash(Sha256::Of(token).Hex()).value();
  EXPECT_EQ(rec.last_used_at, std::optional<int64_t>(1700000000));

  now_ms_ += 30'000;  // past the cache TTL, within the touch interval
  for (int i = 0; i < 10; ++i) Auth(token);
  EXPECT_EQ(counting_->token_lookups.load(), 2);
  EXPECT_EQ(counting_->touches.load(), 1);

  now_ms_ += 31'000;  // a minute after the first touch
  for (int i = 0; i < 10; ++i) Auth(token);
  EXPECT_EQ(counting_->touches.load(), 2);
}

TEST_F(AuthenticatorTest, RevokeThroughServiceTakesEffectAtOnce) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  Principal p = Auth(token);  // now cached
  ASSERT_TRUE(authenticator_->RevokeToken("alice", p.token_id).has_value());
  ExpectUnauthorized("Bearer " + token);
  EXPECT_TRUE(authenticator_->ListTokens("alice")->empty());
  EXPECT_EQ(authenticator_->RevokeToken("alice", p.token_id).error().code, ErrorCode::NotFound);
}

TEST_F(AuthenticatorTest, RevokeElsewhereTakesEffectWithinTtl) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  Principal p = Auth(token);
  // Revoked by another process (e.g. the admin CLI): this process's cache still holds it.
  ASSERT_TRUE(stores_.users->RevokeToken(p.user_id, p.token_id).has_value());
  EXPECT_TRUE(authenticator_->Authenticate("Bearer " + token).has_value());
  now_ms_ += 5'001;
  ExpectUnauthorized("Bearer " + token);
}

TEST_F(AuthenticatorTest, ExpiredTokenIsRejectedEvenWhenCached) {
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  auto t = authenticator_->CreateToken("alice", "ci", TokenRole::Read, 1700000002).value();
  Auth(t.token);
  now_ms_ += 1'000;
  Auth(t.token);  // cached, not yet expired
  now_ms_ += 1'000;
  ExpectUnauthorized("Bearer " + t.token);
}

TEST_F(AuthenticatorTest, TokenManagementErrors) {
  EXPECT_EQ(authenticator_->CreateToken("ghost", "x", TokenRole::Read).error().code,
            ErrorCode::NotFound);
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  EXPECT_EQ(authenticator_->CreateToken("alice", "", TokenRole::Read).error().code,
            ErrorCode::BadRequest);
  auto a = authenticator_->CreateToken("alice", "one", TokenRole::Read).value();
  auto b = authenticator_->CreateToken("alice", "two", TokenRole::Write).value();
  EXPECT_NE(a.token, b.token);
  auto list = authenticator_->ListTokens("alice").value();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "one");
  EXPECT_EQ(list[1].role, TokenRole::Write);
  EXPECT_EQ(list[0].sha256_hex, Sha256::Of(a.token).Hex());
}

TEST_F(AuthenticatorTest, WhoAmIReportsUserOrgsAndToken) {
  ASSERT_TRUE(
      accounts_->CreateUser("alice", "alice@example.org", false, "correct horse", "Alice Example")
          .has_value());
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice", "ACME").has_value());
  auto t = authenticator_->CreateToken("alice", "laptop", TokenRole::Write).value();
  auto info = authenticator_->WhoAmI(Auth(t.token));
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->name, "alice");
  EXPECT_EQ(info->fullname, "Alice Example");
  EXPECT_EQ(info->email, "alice@example.org");
  ASSERT_EQ(info->orgs.size(), 1u);
  EXPECT_EQ(info->orgs[0].org.name, "acme");
  EXPECT_EQ(info->orgs[0].org.fullname, "ACME");
  EXPECT_EQ(info->orgs[0].role, db::OrgRole::Admin);
  EXPECT_EQ(info->token_display_name, "laptop");
  EXPECT_EQ(info->token_role, TokenRole::Write);
  EXPECT_EQ(info->token_created_at, 1700000000);

  auto anon = authenticator_->WhoAmI(Principal::Anonymous());
  ASSERT_FALSE(anon.has_value());
  EXPECT_EQ(anon.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(anon.error().message, "Invalid credentials in Authorization header");
}

TEST_F(AuthenticatorTest, ConcurrentAuthenticateFromManyThreads) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 4; ++i)
    tokens.push_back(UserWithToken("user" + std::to_string(i), TokenRole::Write));
  std::atomic<int> ok{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        int k = (t + i) % 4;
        auto p = authenticator_->Authenticate("Bearer " + tokens[k]);
        if (p && p->name == "user" + std::to_string(k))
          ++ok;
        else
          ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 16000);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(counting_->token_lookups.load(), 4 * 8);  // at most one miss per thread+token
}

}  // namespace
}  // namespace hangar::services

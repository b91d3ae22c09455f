#include "services/auth/session_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>

#include "db/sql/sql_stores.h"

namespace hangar::services {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "hangar-session-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    AccountOptions opts;
    opts.argon2_memory_kib = 64;  // fast; production uses 19 MiB
    opts.argon2_iterations = 1;
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_, opts);
    SessionOptions so;
    so.ttl_seconds = 100;
    so.now = [this] { return now_.load(); };
    sessions_ = std::make_unique<SessionService>(*stores_.users, *accounts_, so);
    ASSERT_TRUE(
        accounts_->CreateUser("alice", "a@example.com", false, "correct horse").has_value());
    ASSERT_TRUE(accounts_->CreateUser("nopass", "n@example.com", false).has_value());
  }
  void TearDown() override {
    sessions_.reset();
    accounts_.reset();
    access_.reset();
    stores_ = db::Stores{};
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  db::Stores stores_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<SessionService> sessions_;
  std::atomic<int64_t> now_{1'000'000};
};

TEST_F(SessionTest, LoginOpensASessionFoundByItsCookie) {
  auto s = sessions_->Login("alice", "correct horse");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->cookie.size(), 64u);
  EXPECT_EQ(s->session.csrf.size(), 64u);
  EXPECT_EQ(s->session.expires_at, 1'000'100);
  auto found = sessions_->Find(s->cookie);
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ((*found)->principal.name, "alice");
  EXPECT_FALSE((*found)->principal.anonymous);
  EXPECT_TRUE((*found)->principal.CanWrite());
  EXPECT_EQ((*found)->csrf, s->session.csrf);
  // Two sign-ins are two sessions with their own cookies and CSRF tokens.
  auto other = sessions_->Login("alice", "correct horse");
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->cookie, s->cookie);
  EXPECT_NE(other->session.csrf, s->session.csrf);
}

TEST_F(SessionTest, WrongPasswordsAndUnknownUsersAreRefusedAlike) {
  for (auto [user, pass] : {std::pair{"alice", "wrong password"}, std::pair{"bob", "correct horse"},
                            std::pair{"nopass", "anything at all"}}) {
    auto s = sessions_->Login(user, pass);
    ASSERT_FALSE(s.has_value()) << user;
    EXPECT_EQ(s.error().code, ErrorCode::Unauthorized);
    EXPECT_EQ(s.error().message, "Invalid username or password");
  }
  auto empty = sessions_->Login("alice", "");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code, ErrorCode::BadRequest);
}

TEST_F(SessionTest, UnknownOversizedAndExpiredCookiesFindNothing) {
  auto s = sessions_->Login("alice", "correct horse");
  ASSERT_TRUE(s.has_value());
  for (std::string cookie : {std::string(), std::string("nope"), std::string(300, 'a')}) {
    auto f = sessions_->Find(cookie);
    ASSERT_TRUE(f.has_value());
    EXPECT_FALSE(f->has_value());
  }
  now_ = 1'000'100;  // the session's expiry
  auto f = sessions_->Find(s->cookie);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->has_value());
  // The expired row was deleted on sight.
  EXPECT_FALSE(stores_.users->FindSession(s->cookie).has_value());
}

TEST_F(SessionTest, LogoutEndsOnlyThatSessionAndSweepRemovesExpiredOnes) {
  auto a = sessions_->Login("alice", "correct horse");
  now_ = 1'000'050;
  auto b = sessions_->Login("alice", "correct horse");
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_TRUE(sessions_->Logout(a->cookie).has_value());
  ASSERT_TRUE(sessions_->Logout(a->cookie).has_value());  // idempotent
  EXPECT_FALSE(sessions_->Find(a->cookie)->has_value());
  EXPECT_TRUE(sessions_->Find(b->cookie)->has_value());
  auto c = sessions_->Login("alice", "correct horse");
  ASSERT_TRUE(c.has_value());
  now_ = 1'000'150;  // b and c, both opened at 1,000,050, expire now (expires_at <= now)
  auto swept = sessions_->Sweep();
  ASSERT_TRUE(swept.has_value());
  EXPECT_EQ(*swept, 2);
  EXPECT_FALSE(sessions_->Find(c->cookie)->has_value());
}

}  // namespace
}  // namespace hangar::services

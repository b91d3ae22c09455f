#include "services/auth/account_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "services/auth_fixture.h"

namespace hangar::services {
namespace {

// Users, passwords, orgs and memberships.
class AccountServiceTest : public testing::AuthTest {};

TEST_F(AccountServiceTest, CreateUserValidatesAndRefusesTakenNames) {
  EXPECT_EQ(accounts_->CreateUser("bad name", "", false).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(accounts_->CreateUser("-x", "", false).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(accounts_->CreateUser("short", "", false, "1234567").error().code,
            ErrorCode::BadRequest);
  ASSERT_TRUE(accounts_->CreateUser("alice", "a@example.org", false).has_value());
  EXPECT_EQ(accounts_->CreateUser("alice", "", false).error().code, ErrorCode::Conflict);
  EXPECT_EQ(accounts_->CreateUser("alice", "", false, "long enough pw").error().code,
            ErrorCode::Conflict);
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  EXPECT_EQ(accounts_->CreateUser("acme", "", false).error().code, ErrorCode::Conflict);
  EXPECT_EQ(accounts_->CreateOrg("alice", "alice").error().code, ErrorCode::Conflict);
  EXPECT_EQ(accounts_->CreateOrg("bad/org", "alice").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(accounts_->CreateOrg("neworg", "ghost").error().code, ErrorCode::NotFound);
}

TEST_F(AccountServiceTest, PasswordsAreArgon2idAndChecked) {
  auto u = accounts_->CreateUser("alice", "", false, "correct horse");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  ASSERT_TRUE(u->password_hash.has_value());
  EXPECT_EQ(u->password_hash->rfind("$argon2id$", 0), 0u);
  EXPECT_EQ(u->password_hash->find("correct horse"), std::string::npos);

  auto ok = accounts_->CheckPassword("alice", "correct horse");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->name, "alice");
  auto bad = accounts_->CheckPassword("alice", "wrong horse");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(accounts_->CheckPassword("ghost", "correct horse").error().code,
            ErrorCode::Unauthorized);

  ASSERT_TRUE(accounts_->SetPassword("alice", "battery staple").has_value());
  EXPECT_FALSE(accounts_->CheckPassword("alice", "correct horse").has_value());
  EXPECT_TRUE(accounts_->CheckPassword("alice", "battery staple").has_value());
  EXPECT_EQ(accounts_->SetPassword("ghost", "battery staple").error().code, ErrorCode::NotFound);

  ASSERT_TRUE(accounts_->CreateUser("nopw", "", false).has_value());
  EXPECT_EQ(accounts_->CheckPassword("nopw", "").error().code, ErrorCode::Unauthorized);
}

// Hashers are held in the hook until the bound has been reached once and all 8 checking
// threads have started, so that concurrency up to the bound really happens and a missing
// bound would let the remaining threads in while the first ones are held.
TEST_F(AccountServiceTest, PasswordHashConcurrencyIsBounded) {
  constexpr int kThreads = 8;
  for (int bound : {1, 2, 3}) {
    std::atomic<int> max_seen{0}, calls{0};
    std::mutex mu;
    std::condition_variable cv;
    bool reached = false;
    int started = 0;
    AccountOptions opts;
    opts.password_hash_concurrency = bound;
    opts.on_password_hash = [&](int in_flight) {
      ++calls;
      int prev = max_seen.load();
      while (prev < in_flight && !max_seen.compare_exchange_weak(prev, in_flight)) {
      }
      std::unique_lock lock(mu);
      if (in_flight >= bound) reached = true;
      cv.notify_all();
      cv.wait(lock, [&] { return reached && started == kThreads; });
    };
    MakeServices(opts);
    if (!stores_.users->FindUserByName("alice")) {
      {
        std::lock_guard lock(mu);
        started = kThreads;  // no checking threads yet: don't hold the setup hash
      }
      ASSERT_TRUE(accounts_->CreateUser("alice", "", false, "correct horse").has_value());
      std::lock_guard lock(mu);
      started = 0;
      reached = false;
      max_seen = 0;
      calls = 0;
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        {
          std::lock_guard lock(mu);
          ++started;
          cv.notify_all();
        }
        EXPECT_TRUE(accounts_->CheckPassword("alice", "correct horse").has_value());
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(max_seen.load(), bound) << "bound " << bound;
    EXPECT_EQ(calls.load(), kThreads);
  }
}

TEST_F(AccountServiceTest, TheLastOrgAdminCannotStepDown) {
  UserWithToken("alice", TokenRole::Write);
  UserWithToken("bob", TokenRole::Write);
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  auto alone = accounts_->AddMember("acme", "alice", db::OrgRole::Read);
  ASSERT_FALSE(alone.has_value());
  EXPECT_EQ(alone.error().code, ErrorCode::Conflict);
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Admin).has_value());
  EXPECT_TRUE(accounts_->AddMember("acme", "alice", db::OrgRole::Write).has_value());
  EXPECT_EQ(accounts_->AddMember("acme", "bob", db::OrgRole::Read).error().code,
            ErrorCode::Conflict);
}

TEST_F(AccountServiceTest, SitePathsAreReservedAsUserAndOrgNames) {
  UserWithToken("alice", TokenRole::Write);
  for (const char* name : {"models", "Settings", "login", "api", "datasets"}) {
    auto u = accounts_->CreateUser(name, "x@example.com", false);
    ASSERT_FALSE(u.has_value()) << name;
    EXPECT_EQ(u.error().code, ErrorCode::BadRequest) << name;
    auto o = accounts_->CreateOrg(name, "alice");
    ASSERT_FALSE(o.has_value()) << name;
    EXPECT_EQ(o.error().code, ErrorCode::BadRequest) << name;
  }
  EXPECT_TRUE(accounts_->CreateUser("modelsmith", "m@example.com", false).has_value());
}

}  // namespace
}  // namespace hangar::services

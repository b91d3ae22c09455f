#pragma once
// The fixture of the services/auth tests: the three auth classes over one SQLite user
// store, seen through a store that counts the calls the hot paths must avoid, and a clock
// the test moves.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "db/sql/sql_stores.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/auth/authenticator.h"

namespace hangar::services::testing {

// Forwards to a real store and counts the calls the hot path must avoid.
class CountingUserStore : public db::UserStore {
 public:
  explicit CountingUserStore(db::UserStore& inner) : in_(inner) {}
  std::atomic<int> token_lookups{0}, touches{0}, member_lookups{0};

  Result<db::UserRecord> CreateUser(const db::UserRecord& u) override { return in_.CreateUser(u); }
  Result<db::UserRecord> FindUserByName(std::string_view n) override {
    return in_.FindUserByName(n);
  }
  Result<db::UserRecord> FindUserById(int64_t id) override { return in_.FindUserById(id); }
  Result<void> SetPasswordHash(int64_t id, const std::optional<std::string>& h) override {
    return in_.SetPasswordHash(id, h);
  }
  Result<void> SetAdmin(int64_t id, bool a) override { return in_.SetAdmin(id, a); }
  Result<db::OrgRecord> CreateOrg(const db::OrgRecord& o, int64_t owner) override {
    return in_.CreateOrg(o, owner);
  }
  Result<db::OrgRecord> FindOrgByName(std::string_view n) override { return in_.FindOrgByName(n); }
  Result<void> AddMember(int64_t o, int64_t u, db::OrgRole r) override {
    return in_.AddMember(o, u, r);
  }
  Result<void> RemoveMember(int64_t o, int64_t u) override { return in_.RemoveMember(o, u); }
  Result<std::optional<db::OrgRole>> MemberRole(std::string_view o, int64_t u) override {
    ++member_lookups;
    return in_.MemberRole(o, u);
  }
  Result<std::vector<db::OrgMembership>> ListOrgsOfUser(int64_t u) override {
    return in_.ListOrgsOfUser(u);
  }
  Result<std::vector<db::OrgMember>> ListMembers(int64_t o) override { return in_.ListMembers(o); }
  Result<db::NamespaceKind> GetNamespaceKind(std::string_view n) override {
    return in_.GetNamespaceKind(n);
  }
  Result<db::TokenRecord> CreateToken(const db::TokenRecord& t) override {
    return in_.CreateToken(t);
  }
  Result<db::TokenRecord> FindTokenByHash(std::string_view h) override {
    ++token_lookups;
    return in_.FindTokenByHash(h);
  }
  Result<void> TouchToken(int64_t id, int64_t s) override {
    ++touches;
    return in_.TouchToken(id, s);
  }
  Result<db::TokenRecord> RevokeToken(int64_t u, int64_t t) override {
    return in_.RevokeToken(u, t);
  }
  Result<std::vector<db::TokenRecord>> ListTokens(int64_t u) override { return in_.ListTokens(u); }
  Result<void> CreateSession(const db::SessionRecord& r) override { return in_.CreateSession(r); }
  Result<db::SessionRecord> FindSession(std::string_view h) override { return in_.FindSession(h); }
  Result<void> DeleteSession(std::string_view h) override { return in_.DeleteSession(h); }
  Result<int64_t> DeleteExpiredSessions(int64_t now) override {
    return in_.DeleteExpiredSessions(now);
  }

 private:
  db::UserStore& in_;
};

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "hangar-auth-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    counting_ = std::make_unique<CountingUserStore>(*stores_.users);
    MakeServices({});
  }
  void TearDown() override {
    accounts_.reset();
    access_.reset();
    authenticator_.reset();
    stores_ = db::Stores{};
    std::filesystem::remove_all(dir_);
  }

  // (Re)builds the three services on the counting store and the test's clock.
  void MakeServices(AccountOptions opts) {
    accounts_.reset();  // it refers to access_
    AuthenticatorOptions authn;
    authn.now_millis = [this] { return now_ms_.load(); };
    authenticator_ = std::make_unique<Authenticator>(*counting_, std::move(authn));
    AccessPolicyOptions policy;
    policy.now_millis = [this] { return now_ms_.load(); };
    access_ = std::make_unique<AccessPolicy>(*counting_, std::move(policy));
    opts.argon2_memory_kib = 64;  // keep tests fast; production default is 19 MiB
    opts.argon2_iterations = 1;
    accounts_ = std::make_unique<AccountService>(*counting_, *access_, std::move(opts));
  }

  // A user with a token; returns the plaintext token.
  std::string UserWithToken(const std::string& name, TokenRole role, bool admin = false) {
    auto u = accounts_->CreateUser(name, name + "@example.org", admin);
    EXPECT_TRUE(u.has_value()) << u.error().message;
    auto t = authenticator_->CreateToken(name, "laptop", role);
    EXPECT_TRUE(t.has_value()) << t.error().message;
    return t ? t->token : "";
  }

  Principal Auth(const std::string& token) {
    auto p = authenticator_->Authenticate("Bearer " + token);
    EXPECT_TRUE(p.has_value()) << p.error().message;
    return p ? *p : Principal{};
  }

  void ExpectUnauthorized(std::string_view header) {
    auto p = authenticator_->Authenticate(header);
    ASSERT_FALSE(p.has_value()) << "accepted: " << header;
    EXPECT_EQ(p.error().code, ErrorCode::Unauthorized);
    EXPECT_EQ(p.error().message, "Invalid credentials in Authorization header");
  }

  std::filesystem::path dir_;
  db::Stores stores_;
  std::unique_ptr<CountingUserStore> counting_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::atomic<int64_t> now_ms_{1700000000000};
};

}  // namespace hangar::services::testing

#include "services/auth/auth_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/sha256.h"
#include "db/sqlite/sqlite_stores.h"
#include "services/auth/account_service.h"

namespace hangar::services {
namespace {

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
    MakeService({});
  }
  void TearDown() override {
    accounts_.reset();
    access_.reset();
    auth_.reset();
    stores_ = db::Stores{};
    std::filesystem::remove_all(dir_);
  }

  void MakeService(AccountOptions opts) {
    accounts_.reset();  // it refers to access_
    AuthOptions authn;
    authn.now_millis = [this] { return now_ms_.load(); };
    auth_ = std::make_unique<AuthService>(*counting_, std::move(authn));
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
    auto t = auth_->CreateToken(name, "laptop", role);
    EXPECT_TRUE(t.has_value()) << t.error().message;
    return t ? t->token : "";
  }

  Principal Auth(const std::string& token) {
    auto p = auth_->Authenticate("Bearer " + token);
    EXPECT_TRUE(p.has_value()) << p.error().message;
    return p ? *p : Principal{};
  }

  void ExpectUnauthorized(std::string_view header) {
    auto p = auth_->Authenticate(header);
    ASSERT_FALSE(p.has_value()) << "accepted: " << header;
    EXPECT_EQ(p.error().code, ErrorCode::Unauthorized);
    EXPECT_EQ(p.error().message, "Invalid credentials in Authorization header");
  }

  std::filesystem::path dir_;
  db::Stores stores_;
  std::unique_ptr<CountingUserStore> counting_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::atomic<int64_t> now_ms_{1700000000000};
};

TEST_F(AuthTest, EmptyHeaderIsAnonymous) {
  auto p = auth_->Authenticate("");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->anonymous);
  EXPECT_FALSE(p->CanWrite());
}

TEST_F(AuthTest, BearerTokenGivesFullPrincipal) {
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
  EXPECT_EQ(auth_->Authenticate("bearer " + token)->name, "alice");
}

TEST_F(AuthTest, BasicWithAnyUserAndTokenAsPassword) {
  std::string token = UserWithToken("alice", TokenRole::Read);
  for (std::string user : {"hf_user", "alice", "", "x"}) {
    auto p = auth_->Authenticate("Basic " + Base64(user + ":" + token));
    ASSERT_TRUE(p.has_value()) << user;
    EXPECT_EQ(p->name, "alice");
    EXPECT_EQ(p->role, TokenRole::Read);
  }
  // Unpadded base64 is accepted too.
  std::string padded = Base64("ab:" + token);  // 40 bytes: two padding characters
  std::string unpadded = padded.substr(0, padded.find('='));
  ASSERT_NE(padded, unpadded);
  EXPECT_TRUE(auth_->Authenticate("Basic " + unpadded).has_value());
}

TEST_F(AuthTest, MalformedOrWrongCredentialsAreUnauthorized) {
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

TEST_F(AuthTest, OnlyTheTokenHashIsStored) {
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

TEST_F(AuthTest, RepeatedTokensAreServedFromCacheAndTouchedOncePerMinute) {
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

TEST_F(AuthTest, RevokeThroughServiceTakesEffectAtOnce) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  Principal p = Auth(token);  // now cached
  ASSERT_TRUE(auth_->RevokeToken("alice", p.token_id).has_value());
  ExpectUnauthorized("Bearer " + token);
  EXPECT_TRUE(auth_->ListTokens("alice")->empty());
  EXPECT_EQ(auth_->RevokeToken("alice", p.token_id).error().code, ErrorCode::NotFound);
}

TEST_F(AuthTest, RevokeElsewhereTakesEffectWithinTtl) {
  std::string token = UserWithToken("alice", TokenRole::Write);
  Principal p = Auth(token);
  // Revoked by another process (e.g. the admin CLI): this process's cache still holds it.
  ASSERT_TRUE(stores_.users->RevokeToken(p.user_id, p.token_id).has_value());
  EXPECT_TRUE(auth_->Authenticate("Bearer " + token).has_value());
  now_ms_ += 5'001;
  ExpectUnauthorized("Bearer " + token);
}

TEST_F(AuthTest, ExpiredTokenIsRejectedEvenWhenCached) {
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  auto t = auth_->CreateToken("alice", "ci", TokenRole::Read, 1700000002).value();
  Auth(t.token);
  now_ms_ += 1'000;
  Auth(t.token);  // cached, not yet expired
  now_ms_ += 1'000;
  ExpectUnauthorized("Bearer " + t.token);
}

TEST_F(AuthTest, TokenManagementErrors) {
  EXPECT_EQ(auth_->CreateToken("ghost", "x", TokenRole::Read).error().code, ErrorCode::NotFound);
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  EXPECT_EQ(auth_->CreateToken("alice", "", TokenRole::Read).error().code, ErrorCode::BadRequest);
  auto a = auth_->CreateToken("alice", "one", TokenRole::Read).value();
  auto b = auth_->CreateToken("alice", "two", TokenRole::Write).value();
  EXPECT_NE(a.token, b.token);
  auto list = auth_->ListTokens("alice").value();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "one");
  EXPECT_EQ(list[1].role, TokenRole::Write);
  EXPECT_EQ(list[0].sha256_hex, Sha256::Of(a.token).Hex());
}

TEST_F(AuthTest, CreateUserValidatesAndRefusesTakenNames) {
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

TEST_F(AuthTest, PasswordsAreArgon2idAndChecked) {
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
TEST_F(AuthTest, PasswordHashConcurrencyIsBounded) {
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
    MakeService(opts);
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

TEST_F(AuthTest, NamespaceAccessFollowsOwnershipRolesAndTokenCap) {
  std::string alice_w = UserWithToken("alice", TokenRole::Write);
  auto alice_r = auth_->CreateToken("alice", "ro", TokenRole::Read)->token;
  std::string bob_w = UserWithToken("bob", TokenRole::Write);
  std::string carol_w = UserWithToken("carol", TokenRole::Write);
  std::string dave_w = UserWithToken("dave", TokenRole::Write);
  std::string root_w = UserWithToken("root", TokenRole::Write, /*admin=*/true);
  auto root_r = auth_->CreateToken("root", "ro", TokenRole::Read)->token;
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Write).has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "carol", db::OrgRole::Read).has_value());

  EXPECT_EQ(access_->NamespaceAccess(Auth(alice_w), "alice"), Access::Admin);
  EXPECT_EQ(access_->NamespaceAccess(Auth(alice_w), "acme"), Access::Admin);
  EXPECT_EQ(access_->NamespaceAccess(Auth(alice_r), "alice"), Access::Read);  // capped
  EXPECT_EQ(access_->NamespaceAccess(Auth(alice_r), "acme"), Access::Read);
  EXPECT_EQ(access_->NamespaceAccess(Auth(alice_w), "bob"), Access::None);
  EXPECT_EQ(access_->NamespaceAccess(Auth(bob_w), "acme"), Access::Write);
  EXPECT_EQ(access_->NamespaceAccess(Auth(carol_w), "acme"), Access::Read);
  EXPECT_EQ(access_->NamespaceAccess(Auth(dave_w), "acme"), Access::None);
  EXPECT_EQ(access_->NamespaceAccess(Principal::Anonymous(), "acme"), Access::None);
  EXPECT_EQ(access_->NamespaceAccess(Auth(root_w), "acme"), Access::Admin);
  EXPECT_EQ(access_->NamespaceAccess(Auth(root_w), "bob"), Access::Admin);
  EXPECT_EQ(access_->NamespaceAccess(Auth(root_r), "bob"), Access::Read);

  // Membership changes through the service apply at once despite the cache.
  ASSERT_TRUE(accounts_->AddMember("acme", "dave", db::OrgRole::Admin).has_value());
  EXPECT_EQ(access_->NamespaceAccess(Auth(dave_w), "acme"), Access::Admin);
  EXPECT_EQ(accounts_->AddMember("nosuch", "dave", db::OrgRole::Read).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(accounts_->AddMember("acme", "ghost", db::OrgRole::Read).error().code,
            ErrorCode::NotFound);
}

TEST_F(AuthTest, MembershipLookupsAreCached) {
  std::string bob_w = UserWithToken("bob", TokenRole::Write);
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Write).has_value());
  Principal bob = Auth(bob_w);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(access_->NamespaceAccess(bob, "acme"), Access::Write);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(access_->NamespaceAccess(bob, "other"), Access::None);
  EXPECT_EQ(counting_->member_lookups.load(), 2);
}

TEST_F(AuthTest, WhoAmIReportsUserOrgsAndToken) {
  ASSERT_TRUE(
      accounts_->CreateUser("alice", "alice@example.org", false, "correct horse", "Alice Example")
          .has_value());
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice", "ACME").has_value());
  auto t = auth_->CreateToken("alice", "laptop", TokenRole::Write).value();
  auto info = auth_->WhoAmI(Auth(t.token));
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

  auto anon = auth_->WhoAmI(Principal::Anonymous());
  ASSERT_FALSE(anon.has_value());
  EXPECT_EQ(anon.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(anon.error().message, "Invalid credentials in Authorization header");
}

TEST_F(AuthTest, ApplyVisibilityShowsOwnAndOrgPrivateRepos) {
  std::string bob_w = UserWithToken("bob", TokenRole::Read);
  std::string root_w = UserWithToken("root", TokenRole::Read, true);
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Read).has_value());
  for (const char* ns : {"alice", "acme", "bob"}) {
    db::RepoRecord r;
    r.ns = ns;
    r.name = "secret";
    r.is_private = true;
    ASSERT_TRUE(stores_.repos->Create(r).has_value());
  }
  auto visible = [&](const Principal& p) {
    db::RepoQuery q;
    EXPECT_TRUE(access_->ApplyVisibility(p, q).has_value());
    std::vector<std::string> out;
    auto page = stores_.repos->List(q);
    EXPECT_TRUE(page.has_value());
    if (!page) return out;
    for (const auto& r : page->items) out.push_back(r.ns);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_TRUE(visible(Principal::Anonymous()).empty());
  EXPECT_EQ(visible(Auth(bob_w)), (std::vector<std::string>{"acme", "bob"}));
  EXPECT_EQ(visible(Auth(root_w)), (std::vector<std::string>{"acme", "alice", "bob"}));
}

TEST_F(AuthTest, ConcurrentAuthenticateFromManyThreads) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 4; ++i)
    tokens.push_back(UserWithToken("user" + std::to_string(i), TokenRole::Write));
  std::atomic<int> ok{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        int k = (t + i) % 4;
        auto p = auth_->Authenticate("Bearer " + tokens[k]);
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

TEST_F(AuthTest, TheLastOrgAdminCannotStepDown) {
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

TEST_F(AuthTest, SitePathsAreReservedAsUserAndOrgNames) {
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

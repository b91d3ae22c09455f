#include "services/auth/access_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "services/auth_fixture.h"

namespace hangar::services {
namespace {

// Namespace access, listing visibility and the membership cache.
class AccessPolicyTest : public testing::AuthTest {};

TEST_F(AccessPolicyTest, NamespaceAccessFollowsOwnershipRolesAndTokenCap) {
  std::string alice_w = UserWithToken("alice", TokenRole::Write);
  auto alice_r = authenticator_->CreateToken("alice", "ro", TokenRole::Read)->token;
  std::string bob_w = UserWithToken("bob", TokenRole::Write);
  std::string carol_w = UserWithToken("carol", TokenRole::Write);
  std::string dave_w = UserWithToken("dave", TokenRole::Write);
  std::string root_w = UserWithToken("root", TokenRole::Write, /*admin=*/true);
  auto root_r = authenticator_->CreateToken("root", "ro", TokenRole::Read)->token;
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

TEST_F(AccessPolicyTest, MembershipLookupsAreCached) {
  std::string bob_w = UserWithToken("bob", TokenRole::Write);
  ASSERT_TRUE(accounts_->CreateUser("alice", "", false).has_value());
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Write).has_value());
  Principal bob = Auth(bob_w);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(access_->NamespaceAccess(bob, "acme"), Access::Write);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(access_->NamespaceAccess(bob, "other"), Access::None);
  EXPECT_EQ(counting_->member_lookups.load(), 2);
}

TEST_F(AccessPolicyTest, ApplyVisibilityShowsOwnAndOrgPrivateRepos) {
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

}  // namespace
}  // namespace hangar::services

#include <gtest/gtest.h>

#include "core/sha256.h"
#include "db/test_db.h"

namespace hangar::db {
namespace {

class UserStoreTest : public testing::StoreTest {};

UserRecord User(std::string name, bool admin = false) {
  UserRecord u;
  u.name = std::move(name);
  u.email = u.name + "@example.org";
  u.is_admin = admin;
  return u;
}

TokenRecord Token(int64_t user_id, std::string text, TokenRole role = TokenRole::Write) {
  TokenRecord t;
  t.user_id = user_id;
  t.name = "laptop";
  t.role = role;
  t.sha256_hex = Sha256::Of(text).Hex();
  return t;
}

TEST_P(UserStoreTest, CreateAndFindUser) {
  auto alice = users().CreateUser(User("alice", true));
  ASSERT_TRUE(alice.has_value()) << alice.error().message;
  EXPECT_GT(alice->id, 0);
  EXPECT_GT(alice->created_at, 0);

  auto by_name = users().FindUserByName("alice");
  ASSERT_TRUE(by_name.has_value());
  EXPECT_EQ(by_name->id, alice->id);
  EXPECT_EQ(by_name->email, "alice@example.org");
  EXPECT_TRUE(by_name->is_admin);
  EXPECT_FALSE(by_name->password_hash.has_value());

  auto by_id = users().FindUserById(alice->id);
  ASSERT_TRUE(by_id.has_value());
  EXPECT_EQ(by_id->name, "alice");

  EXPECT_EQ(users().FindUserByName("bob").error().code, ErrorCode::NotFound);
  EXPECT_EQ(users().FindUserById(9999).error().code, ErrorCode::NotFound);
}

TEST_P(UserStoreTest, PasswordHashAndAdminFlagUpdate) {
  auto alice = users().CreateUser(User("alice")).value();
  ASSERT_TRUE(users().SetPasswordHash(alice.id, std::string("$argon2id$x")).has_value());
  ASSERT_TRUE(users().SetAdmin(alice.id, true).has_value());
  auto got = users().FindUserById(alice.id).value();
  EXPECT_EQ(got.password_hash, std::optional<std::string>("$argon2id$x"));
  EXPECT_TRUE(got.is_admin);
  ASSERT_TRUE(users().SetPasswordHash(alice.id, std::nullopt).has_value());
  EXPECT_FALSE(users().FindUserById(alice.id)->password_hash.has_value());
  EXPECT_EQ(users().SetAdmin(12345, true).error().code, ErrorCode::NotFound);
}

TEST_P(UserStoreTest, UserAndOrgNamesNeverCollide) {
  auto alice = users().CreateUser(User("alice")).value();
  EXPECT_EQ(users().CreateUser(User("alice")).error().code, ErrorCode::Conflict);
  EXPECT_EQ(users().CreateOrg(OrgRecord{0, "alice", "", 0}, 0).error().code, ErrorCode::Conflict);
  ASSERT_TRUE(users().CreateOrg(OrgRecord{0, "acme", "ACME", 0}, alice.id).has_value());
  auto dup = users().CreateUser(User("acme"));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, ErrorCode::Conflict);
  EXPECT_NE(dup.error().message.find("acme"), std::string::npos);

  EXPECT_EQ(users().GetNamespaceKind("alice").value(), NamespaceKind::User);
  EXPECT_EQ(users().GetNamespaceKind("acme").value(), NamespaceKind::Org);
  EXPECT_EQ(users().GetNamespaceKind("nobody").value(), NamespaceKind::None);
  // An org is not a user, and the other way round.
  EXPECT_EQ(users().FindUserByName("acme").error().code, ErrorCode::NotFound);
  EXPECT_EQ(users().FindOrgByName("alice").error().code, ErrorCode::NotFound);
}

TEST_P(UserStoreTest, OrgMembershipUpsertListAndRemove) {
  auto alice = users().CreateUser(User("alice")).value();
  auto bob = users().CreateUser(User("bob")).value();
  auto acme = users().CreateOrg(OrgRecord{0, "acme", "ACME Inc", 0}, alice.id).value();
  EXPECT_EQ(users().FindOrgByName("acme")->fullname, "ACME Inc");

  EXPECT_EQ(users().MemberRole("acme", alice.id).value(), OrgRole::Admin);
  EXPECT_EQ(users().MemberRole("acme", bob.id).value(), std::nullopt);
  EXPECT_EQ(users().MemberRole("nosuchorg", bob.id).value(), std::nullopt);

  ASSERT_TRUE(users().AddMember(acme.id, bob.id, OrgRole::Read).has_value());
  EXPECT_EQ(users().MemberRole("acme", bob.id).value(), OrgRole::Read);
  ASSERT_TRUE(users().AddMember(acme.id, bob.id, OrgRole::Write).has_value());  // upsert
  EXPECT_EQ(users().MemberRole("acme", bob.id).value(), OrgRole::Write);

  auto members = users().ListMembers(acme.id).value();
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].user_name, "alice");
  EXPECT_EQ(members[1].user_name, "bob");
  EXPECT_EQ(members[1].role, OrgRole::Write);

  auto orgs = users().ListOrgsOfUser(bob.id).value();
  ASSERT_EQ(orgs.size(), 1u);
  EXPECT_EQ(orgs[0].org.name, "acme");
  EXPECT_EQ(orgs[0].role, OrgRole::Write);

  // A user is not an org: no membership "in" alice.
  EXPECT_EQ(users().AddMember(alice.id, bob.id, OrgRole::Read).error().code, ErrorCode::NotFound);
  EXPECT_EQ(users().AddMember(acme.id, 4242, OrgRole::Read).error().code, ErrorCode::NotFound);

  ASSERT_TRUE(users().RemoveMember(acme.id, bob.id).has_value());
  EXPECT_EQ(users().MemberRole("acme", bob.id).value(), std::nullopt);
  EXPECT_EQ(users().RemoveMember(acme.id, bob.id).error().code, ErrorCode::NotFound);
}

TEST_P(UserStoreTest, CreateOrgWithUnknownOwnerLeavesNothing) {
  EXPECT_EQ(users().CreateOrg(OrgRecord{0, "ghosts", "", 0}, 777).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(users().GetNamespaceKind("ghosts").value(), NamespaceKind::None);
}

TEST_P(UserStoreTest, TokenLifecycle) {
  auto alice = users().CreateUser(User("alice")).value();
  auto bob = users().CreateUser(User("bob")).value();
  TokenRecord in = Token(alice.id, "hf_secret1", TokenRole::Read);
  in.expires_at = 2000000000;
  auto t = users().CreateToken(in);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_GT(t->id, 0);

  auto found = users().FindTokenByHash(Sha256::Of("hf_secret1").Hex());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, t->id);
  EXPECT_EQ(found->user_id, alice.id);
  EXPECT_EQ(found->role, TokenRole::Read);
  EXPECT_EQ(found->name, "laptop");
  EXPECT_EQ(found->expires_at, std::optional<int64_t>(2000000000));
  EXPECT_FALSE(found->last_used_at.has_value());
  EXPECT_FALSE(found->revoked);
  EXPECT_EQ(users().FindTokenByHash(Sha256::Of("other").Hex()).error().code, ErrorCode::NotFound);

  // The hash is unique.
  EXPECT_EQ(users().CreateToken(Token(bob.id, "hf_secret1")).error().code, ErrorCode::Conflict);
  // Tokens belong to existing users only.
  EXPECT_EQ(users().CreateToken(Token(999, "hf_x")).error().code, ErrorCode::NotFound);

  ASSERT_TRUE(users().TouchToken(t->id, 1700000000).has_value());
  EXPECT_EQ(users().FindTokenByHash(in.sha256_hex)->last_used_at,
            std::optional<int64_t>(1700000000));

  auto second = users().CreateToken(Token(alice.id, "hf_secret2")).value();
  EXPECT_EQ(users().ListTokens(alice.id)->size(), 2u);

  // Only the owner revokes, once.
  EXPECT_EQ(users().RevokeToken(bob.id, t->id).error().code, ErrorCode::NotFound);
  auto revoked = users().RevokeToken(alice.id, t->id);
  ASSERT_TRUE(revoked.has_value());
  EXPECT_EQ(revoked->sha256_hex, in.sha256_hex);
  EXPECT_EQ(users().RevokeToken(alice.id, t->id).error().code, ErrorCode::NotFound);
  EXPECT_TRUE(users().FindTokenByHash(in.sha256_hex)->revoked);
  auto live = users().ListTokens(alice.id).value();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].id, second.id);
}

INSTANTIATE_TEST_SUITE_P(Engines, UserStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

// SocialService (issue 19 §3, docs/social.md): who may like a repo, the like counts the
// repo's record shows, likers and liked lists with their visibility, and the overviews.

#include "services/social/social_service.h"

#include <gtest/gtest.h>

#include <memory>

#include "fixtures.h"
#include "service_test.h"

namespace hangar::services {
namespace {

class SocialTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    social_ = std::make_unique<SocialService>(*repos_, *access_, *accounts_, *stores_.repos,
                                              *stores_.likes);
    ann_ = testing::MakeUser(*accounts_, "ann");
    bob_ = testing::MakeUser(*accounts_, "bob");
    ASSERT_TRUE(accounts_->CreateOrg("acme", "ann").has_value());
    ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Read).has_value());
    testing::MakeRepoRow(*stores_.repos, "ann", "pub");
    testing::MakeRepoRow(*stores_.repos, "ann", "priv", /*is_private=*/true);
    testing::MakeRepoRow(*stores_.repos, "acme", "m");
    testing::MakeRepoRow(*stores_.repos, "acme", "secret", /*is_private=*/true);
  }
  int64_t LikesOf(const RepoId& id) { return repos_->OpenMetadata(ann_, id).value().record.likes; }

  const RepoId pub_{RepoType::Model, "ann", "pub"};
  const RepoId priv_{RepoType::Model, "ann", "priv"};
  std::unique_ptr<SocialService> social_;
  Principal ann_, bob_;
};

TEST_F(SocialTest, LikingCountsOnTheRepoAtOnce) {
  EXPECT_EQ(LikesOf(pub_), 0);
  EXPECT_TRUE(social_->Like(bob_, pub_).value());
  // The repo's cached record was dropped: its info shows the like at once.
  EXPECT_EQ(LikesOf(pub_), 1);
  EXPECT_FALSE(social_->Like(bob_, pub_).value());
  EXPECT_EQ(LikesOf(pub_), 1);
  auto rec = repos_->OpenMetadata(bob_, pub_).value().record;
  EXPECT_TRUE(social_->Likes(bob_, rec).value());
  EXPECT_FALSE(social_->Likes(Principal(), rec).value());
  EXPECT_TRUE(social_->Unlike(bob_, pub_).value());
  EXPECT_FALSE(social_->Unlike(bob_, pub_).value());
  EXPECT_EQ(LikesOf(pub_), 0);
}

TEST_F(SocialTest, WhoMayNotLike) {
  EXPECT_EQ(social_->Like(Principal(), pub_).error().code, ErrorCode::Unauthorized);
  Principal read_token = bob_;
  read_token.role = TokenRole::Read;
  EXPECT_EQ(social_->Like(read_token, pub_).error().code, ErrorCode::Forbidden);
  Principal key = bob_;
  key.deploy_key_id = 4;
  key.repo_scope = 1;
  EXPECT_EQ(social_->Unlike(key, pub_).error().code, ErrorCode::Forbidden);
  // A private repo bob cannot see is not there for him.
  EXPECT_EQ(social_->Like(bob_, priv_).error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(social_->Like(bob_, {RepoType::Model, "ann", "nope"}).error().code,
            ErrorCode::RepoNotFound);
  EXPECT_EQ(LikesOf(pub_), 0);
}

TEST_F(SocialTest, LikersAndLikedListsPageAndHidePrivateRepos) {
  ASSERT_TRUE(social_->Like(ann_, pub_).has_value());
  ASSERT_TRUE(social_->Like(bob_, pub_).has_value());
  ASSERT_TRUE(social_->Like(ann_, priv_).has_value());

  auto first = social_->Likers(Principal(), pub_, "", 1);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_EQ(first->items.size(), 1u);
  ASSERT_FALSE(first->next_cursor.empty());
  auto second = social_->Likers(Principal(), pub_, first->next_cursor, 1).value();
  ASSERT_EQ(second.items.size(), 1u);
  EXPECT_NE(first->items[0].user_name, second.items[0].user_name);
  EXPECT_TRUE(second.next_cursor.empty()) << "the last page says so, even when full";
  EXPECT_EQ(social_->Likers(Principal(), pub_, "x_1", 10).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(social_->Likers(bob_, priv_, "", 10).error().code, ErrorCode::RepoNotFound);

  // ann's likes: the private one only to those who may read it.
  EXPECT_EQ(social_->LikedBy(Principal(), "ann", "", 10)->items.size(), 1u);
  EXPECT_EQ(social_->LikedBy(bob_, "ann", "", 10)->items.size(), 1u);
  EXPECT_EQ(social_->LikedBy(ann_, "ann", "", 10)->items.size(), 2u);
  EXPECT_EQ(social_->LikedBy(ann_, "nobody", "", 10).error().code, ErrorCode::NotFound);
  EXPECT_EQ(social_->LikedBy(ann_, "ann", "1_", 10).error().code, ErrorCode::BadRequest);
}

TEST_F(SocialTest, OverviewsCountWhatTheCallerMaySee) {
  ASSERT_TRUE(social_->Like(ann_, pub_).has_value());
  ASSERT_TRUE(social_->Like(ann_, priv_).has_value());
  auto seen_by_bob = social_->User(bob_, "ann");
  ASSERT_TRUE(seen_by_bob.has_value()) << seen_by_bob.error().message;
  EXPECT_EQ(seen_by_bob->user.name, "ann");
  EXPECT_EQ(seen_by_bob->repos.models, 1);
  EXPECT_EQ(seen_by_bob->likes, 1);
  ASSERT_EQ(seen_by_bob->orgs.size(), 1u);
  EXPECT_EQ(seen_by_bob->orgs[0].name, "acme");
  auto seen_by_ann = social_->User(ann_, "ann").value();
  EXPECT_EQ(seen_by_ann.repos.models, 2);
  EXPECT_EQ(seen_by_ann.likes, 2);
  EXPECT_EQ(social_->User(ann_, "acme").error().code, ErrorCode::NotFound);

  auto org = social_->Org(Principal(), "acme");
  ASSERT_TRUE(org.has_value()) << org.error().message;
  EXPECT_EQ(org->members, 2);
  EXPECT_EQ(org->repos.models, 1);
  EXPECT_EQ(social_->Org(bob_, "acme")->repos.models, 2) << "a read member sees the private one";
  EXPECT_EQ(social_->Org(ann_, "ann").error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace hangar::services

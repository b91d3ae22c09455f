// LikeStore's conformance suite (db/like_store.h), on each engine; the repos' like count,
// RepoStore::Count and sort=likes.

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class LikeStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      u.fullname = std::string(name) + " full";
      *id = users().CreateUser(u).value().id;
    }
    pub_ = Make(RepoType::Model, "ann", "pub", false);
    priv_ = Make(RepoType::Model, "ann", "priv", true);
    data_ = Make(RepoType::Dataset, "bob", "data", false);
  }
  RepoRecord Make(RepoType type, const char* ns, const char* name, bool is_private) {
    RepoRecord r;
    r.type = type;
    r.ns = ns;
    r.name = name;
    r.is_private = is_private;
    return repos().Create(r).value();
  }
  int64_t CountOf(const RepoRecord& r) { return repos().FindById(r.id).value().likes; }

  int64_t ann_ = 0, bob_ = 0;
  RepoRecord pub_, priv_, data_;
};

TEST_P(LikeStoreTest, ALikeCountsOnceAndUnlikingTakesItBack) {
  EXPECT_EQ(CountOf(pub_), 0);
  EXPECT_TRUE(likes().Like(pub_.id, bob_, 100).value());
  EXPECT_FALSE(likes().Like(pub_.id, bob_, 200).value()) << "a second like changes nothing";
  EXPECT_TRUE(likes().Like(pub_.id, ann_, 150).value());
  EXPECT_EQ(CountOf(pub_), 2);
  EXPECT_TRUE(likes().Likes(pub_.id, bob_).value());
  EXPECT_FALSE(likes().Likes(data_.id, bob_).value());

  EXPECT_TRUE(likes().Unlike(pub_.id, bob_).value());
  EXPECT_FALSE(likes().Unlike(pub_.id, bob_).value());
  EXPECT_EQ(CountOf(pub_), 1);
  EXPECT_FALSE(likes().Likes(pub_.id, bob_).value());

  EXPECT_EQ(likes().Like(9999999, bob_, 1).error().code, ErrorCode::NotFound);
  EXPECT_EQ(likes().Like(pub_.id, 9999999, 1).error().code, ErrorCode::NotFound);
  EXPECT_EQ(CountOf(pub_), 1);
}

TEST_P(LikeStoreTest, LikersPageNewestFirst) {
  ASSERT_TRUE(likes().Like(pub_.id, ann_, 100).has_value());
  ASSERT_TRUE(likes().Like(pub_.id, bob_, 200).has_value());
  auto all = likes().Likers(pub_.id, {}, 10).value();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].user_name, "bob");
  EXPECT_EQ(all[0].user_fullname, "bob full");
  EXPECT_EQ(all[0].created_at, 200);
  EXPECT_EQ(all[1].user_name, "ann");
  auto first = likes().Likers(pub_.id, {}, 1).value();
  ASSERT_EQ(first.size(), 1u);
  LikeCursor after{first[0].created_at, first[0].user_id, true};
  auto second = likes().Likers(pub_.id, after, 1).value();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].user_name, "ann");
  EXPECT_TRUE(
      likes().Likers(pub_.id, {second[0].created_at, second[0].user_id, true}, 1).value().empty());
}

TEST_P(LikeStoreTest, ALikedListShowsOnlyWhatTheReaderMaySee) {
  ASSERT_TRUE(likes().Like(pub_.id, bob_, 100).has_value());
  ASSERT_TRUE(likes().Like(priv_.id, bob_, 200).has_value());
  ASSERT_TRUE(likes().Like(data_.id, bob_, 300).has_value());

  auto public_only = likes().LikedBy(bob_, {}, {}, 10).value();
  ASSERT_EQ(public_only.size(), 2u);
  EXPECT_EQ(public_only[0].repo_name, "data");
  EXPECT_EQ(public_only[0].repo_type, RepoType::Dataset);
  EXPECT_EQ(public_only[0].repo_ns, "bob");
  EXPECT_EQ(public_only[1].repo_name, "pub");
  EXPECT_EQ(likes().CountLikedBy(bob_, {}).value(), 2);

  LikeVisibility ann_sees;
  ann_sees.readable_namespaces = {"ann"};
  auto with_private = likes().LikedBy(bob_, ann_sees, {}, 10).value();
  ASSERT_EQ(with_private.size(), 3u);
  EXPECT_EQ(with_private[1].repo_name, "priv");
  EXPECT_TRUE(with_private[1].repo_private);
  EXPECT_EQ(likes().CountLikedBy(bob_, ann_sees).value(), 3);
  LikeVisibility admin;
  admin.all_private = true;
  EXPECT_EQ(likes().CountLikedBy(bob_, admin).value(), 3);

  auto page = likes().LikedBy(bob_, admin, {}, 2).value();
  ASSERT_EQ(page.size(), 2u);
  auto rest = likes().LikedBy(bob_, admin, {page[1].created_at, page[1].repo_id, true}, 2).value();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].repo_name, "pub");
}

TEST_P(LikeStoreTest, DeletingARepoDropsItsLikes) {
  ASSERT_TRUE(likes().Like(pub_.id, bob_, 100).has_value());
  ASSERT_TRUE(repos().Delete(pub_.Id()).has_value());
  EXPECT_EQ(likes().CountLikedBy(bob_, {}).value(), 0);
  EXPECT_TRUE(likes().LikedBy(bob_, {}, {}, 10).value().empty());
}

TEST_P(LikeStoreTest, ListingsSortByLikesAndNamespacesCountTheirRepos) {
  ASSERT_TRUE(likes().Like(data_.id, bob_, 100).has_value());
  ASSERT_TRUE(likes().Like(data_.id, ann_, 100).has_value());
  ASSERT_TRUE(likes().Like(pub_.id, ann_, 100).has_value());
  RepoQuery q;
  q.sort = ParseRepoSort("likes");
  EXPECT_EQ(q.sort, RepoSort::Likes);
  q.limit = 1;
  auto first = repos().List(q).value();
  ASSERT_EQ(first.items.size(), 1u);
  EXPECT_EQ(first.items[0].name, "data");
  EXPECT_EQ(first.items[0].likes, 2);
  q.cursor = first.next_cursor;
  auto second = repos().List(q).value();
  ASSERT_EQ(second.items.size(), 1u);
  EXPECT_EQ(second.items[0].name, "pub");
  EXPECT_TRUE(second.next_cursor.empty()) << "the private repo is not listed";

  auto ann_public = repos().Count("ann", false).value();
  EXPECT_EQ(ann_public.models, 1);
  EXPECT_EQ(ann_public.datasets, 0);
  EXPECT_EQ(repos().Count("ann", true).value().models, 2);
  auto bob = repos().Count("bob", false).value();
  EXPECT_EQ(bob.models, 0);
  EXPECT_EQ(bob.datasets, 1);
  EXPECT_EQ(repos().Count("nobody", true).value().spaces, 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, LikeStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

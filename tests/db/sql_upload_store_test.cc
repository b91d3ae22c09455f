#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class UploadStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    RepoRecord in;
    in.ns = "acme";
    in.name = "bert";
    repo_ = repos().Create(in).value();
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      *id = users().CreateUser(u).value().id;
    }
  }
  UploadRecord Make(std::string id, int64_t user, std::string_view content, int64_t created,
                    int64_t expires) {
    UploadRecord u;
    u.id = std::move(id);
    u.repo_id = repo_.id;
    u.user_id = user;
    u.sha256 = Sha256::Of(content);
    u.size = 100;
    u.part_size = 30;
    u.store_handle = u.id + ":s3-upload-id";
    u.created_at = created;
    u.expires_at = expires;
    return u;
  }
  RepoRecord repo_;
  int64_t ann_ = 0, bob_ = 0;
};

TEST_P(UploadStoreTest, CreateGetRoundTrip) {
  UploadRecord u = Make(std::string(32, 'a'), ann_, "x", 1000, 2000);
  ASSERT_TRUE(uploads().Create(u).has_value());
  auto got = uploads().Get(u.id).value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->repo_id, repo_.id);
  EXPECT_EQ(got->user_id, ann_);
  EXPECT_EQ(got->sha256, u.sha256);
  EXPECT_EQ(got->size, 100u);
  EXPECT_EQ(got->part_size, 30u);
  EXPECT_EQ(got->PartCount(), 4u);
  EXPECT_EQ(got->store_handle, u.store_handle);
  EXPECT_EQ(got->expires_at, 2000);
  EXPECT_FALSE(got->completed_at.has_value());
  EXPECT_EQ(uploads().Create(u).error().code, ErrorCode::Conflict);
  EXPECT_FALSE(uploads().Get(std::string(32, 'b')).value().has_value());
}

TEST_P(UploadStoreTest, UnknownRepoIsRefused) {
  UploadRecord u = Make(std::string(32, 'a'), ann_, "x", 1000, 2000);
  u.repo_id = 4242;
  EXPECT_EQ(uploads().Create(u).error().code, ErrorCode::RepoNotFound);
}

TEST_P(UploadStoreTest, FindOpenSkipsCompletedExpiredAndOthers) {
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '1'), ann_, "x", 1000, 5000)).has_value());
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '2'), ann_, "x", 1100, 5000)).has_value());
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '3'), bob_, "x", 1200, 5000)).has_value());
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '4'), ann_, "y", 1300, 5000)).has_value());
  Sha256 x = Sha256::Of("x");
  // The newest open one of that user, object and size.
  EXPECT_EQ(uploads().FindOpen(repo_.id, ann_, x, 100, 2000).value()->id, std::string(32, '2'));
  EXPECT_EQ(uploads().CountOpen(ann_, 2000).value(), 3);
  EXPECT_EQ(uploads().CountOpen(bob_, 2000).value(), 1);
  ASSERT_TRUE(uploads().MarkCompleted(std::string(32, '2'), 2000, 9000).has_value());
  EXPECT_EQ(uploads().CountOpen(ann_, 2000).value(), 2);
  EXPECT_EQ(uploads().CountOpen(ann_, 6000).value(), 0);  // all expired by then
  EXPECT_EQ(uploads().FindOpen(repo_.id, ann_, x, 100, 2000).value()->id, std::string(32, '1'));
  EXPECT_FALSE(uploads().FindOpen(repo_.id, ann_, x, 101, 2000).value().has_value());
  EXPECT_FALSE(uploads().FindOpen(repo_.id, ann_, x, 100, 6000).value().has_value());  // expired
  EXPECT_EQ(uploads().Get(std::string(32, '2')).value()->completed_at, 2000);
}

TEST_P(UploadStoreTest, ExpiryListingAndDelete) {
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '1'), ann_, "x", 1000, 3000)).has_value());
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '2'), ann_, "y", 1000, 2000)).has_value());
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '3'), ann_, "z", 1000, 9000)).has_value());
  auto expired = uploads().ListExpired(4000, 10).value();
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[0].id, std::string(32, '2'));  // oldest expiry first
  ASSERT_TRUE(uploads().SetExpiry(std::string(32, '1'), 8000).has_value());
  EXPECT_EQ(uploads().ListExpired(4000, 10).value().size(), 1u);
  ASSERT_TRUE(uploads().Delete(std::string(32, '2')).has_value());
  ASSERT_TRUE(uploads().Delete(std::string(32, '2')).has_value());  // no-op
  EXPECT_TRUE(uploads().ListExpired(4000, 10).value().empty());
}

TEST_P(UploadStoreTest, UploadsGoWithTheirRepo) {
  ASSERT_TRUE(uploads().Create(Make(std::string(32, '1'), ann_, "x", 1000, 3000)).has_value());
  ASSERT_TRUE(repos().Delete(repo_.Id()).has_value());
  EXPECT_FALSE(uploads().Get(std::string(32, '1')).value().has_value());
}

INSTANTIATE_TEST_SUITE_P(Engines, UploadStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

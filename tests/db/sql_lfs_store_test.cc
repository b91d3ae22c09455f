#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class LfsStoreTest : public testing::StoreTest {};

TEST_P(LfsStoreTest, LinkIsLinkedUnlink) {
  RepoRecord in;
  in.ns = "acme";
  in.name = "bert";
  auto repo = repos().Create(in).value();
  Sha256 a = Sha256::Of("a"), b = Sha256::Of("b");

  EXPECT_EQ(lfs().IsLinked(repo.id, a).value(), std::nullopt);
  ASSERT_TRUE(lfs().Link(repo.id, a, 123).has_value());
  ASSERT_TRUE(lfs().Link(repo.id, a, 123).has_value());  // idempotent
  ASSERT_TRUE(lfs().Link(repo.id, b, 7).has_value());
  EXPECT_EQ(lfs().IsLinked(repo.id, a).value(), std::optional<uint64_t>(123));
  EXPECT_EQ(lfs().ListForRepo(repo.id)->size(), 2u);
  EXPECT_EQ(lfs().CountLinks(a).value(), 1);

  ASSERT_TRUE(lfs().Unlink(repo.id, a).has_value());
  ASSERT_TRUE(lfs().Unlink(repo.id, a).has_value());  // missing link: no-op
  EXPECT_EQ(lfs().IsLinked(repo.id, a).value(), std::nullopt);
  EXPECT_EQ(lfs().CountLinks(a).value(), 0);
  EXPECT_EQ(lfs().Link(4242, a, 1).error().code, ErrorCode::RepoNotFound);
}

TEST_P(LfsStoreTest, LinksAreScopedToTheirRepoAndGoWithIt) {
  RepoRecord r1, r2;
  r1.ns = r2.ns = "acme";
  r1.name = "one";
  r2.name = "two";
  auto one = repos().Create(r1).value();
  auto two = repos().Create(r2).value();
  Sha256 a = Sha256::Of("weights");
  ASSERT_TRUE(lfs().Link(one.id, a, 10).has_value());
  // Knowing the hash gives nothing through another repo.
  EXPECT_EQ(lfs().IsLinked(two.id, a).value(), std::nullopt);
  ASSERT_TRUE(lfs().Link(two.id, a, 10).has_value());
  EXPECT_EQ(lfs().CountLinks(a).value(), 2);
  ASSERT_TRUE(repos().Delete(one.Id()).has_value());
  EXPECT_EQ(lfs().CountLinks(a).value(), 1);
  EXPECT_TRUE(lfs().ListForRepo(one.id)->empty());
}

TEST_P(LfsStoreTest, ListForRepoPagesInOidOrder) {
  RepoRecord in;
  in.ns = "acme";
  in.name = "big";
  auto repo = repos().Create(in).value();
  std::vector<std::string> want;
  for (int i = 0; i < 25; ++i) {
    Sha256 s = Sha256::Of("obj" + std::to_string(i));
    want.push_back(s.Hex());
    ASSERT_TRUE(lfs().Link(repo.id, s, i).has_value());
  }
  std::sort(want.begin(), want.end());
  std::vector<std::string> got;
  std::optional<Sha256> after;
  for (;;) {
    auto page = lfs().ListForRepo(repo.id, after, 10).value();
    if (page.empty()) break;
    EXPECT_LE(page.size(), 10u);
    for (const auto& l : page) got.push_back(l.oid.Hex());
    after = page.back().oid;
  }
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Engines, LfsStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

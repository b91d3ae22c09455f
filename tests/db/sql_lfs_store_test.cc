#include <gtest/gtest.h>

#include <ctime>

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

TEST_P(LfsStoreTest, LinkRecordsWhenItWasFirstMade) {
  RepoRecord in;
  in.ns = "acme";
  in.name = "dated";
  auto repo = repos().Create(in).value();
  Sha256 a = Sha256::Of("a"), b = Sha256::Of("b");
  const int64_t before = std::time(nullptr);
  ASSERT_TRUE(lfs().Link(repo.id, a, 5).has_value());
  const int64_t after = std::time(nullptr);
  auto links = lfs().ListForRepo(repo.id).value();
  ASSERT_EQ(links.size(), 1u);
  EXPECT_GE(links[0].created_at, before);
  EXPECT_LE(links[0].created_at, after);

  // Linking again keeps when it was first linked (here set far in the past), and the row.
  {
    auto c = stores_.pool->Write().value();
    ASSERT_TRUE(c->Exec("UPDATE lfs_links SET created_at = 1234 WHERE sha256 = '" + a.Hex() + "'")
                    .has_value());
  }
  ASSERT_TRUE(lfs().Link(repo.id, a, 6).has_value());
  ASSERT_TRUE(lfs().Link(repo.id, b, 7).has_value());
  links = lfs().ListForRepo(repo.id).value();
  ASSERT_EQ(links.size(), 2u);
  const LfsLink& la = links[0].oid == a ? links[0] : links[1];
  const LfsLink& lb = links[0].oid == a ? links[1] : links[0];
  EXPECT_EQ(la.oid, a);
  EXPECT_EQ(la.created_at, 1234);
  EXPECT_EQ(la.size, 6u);
  EXPECT_EQ(lb.oid, b);
  EXPECT_GE(lb.created_at, before);
  EXPECT_LE(lb.created_at, std::time(nullptr));
}

TEST_P(LfsStoreTest, PurgesReadBackNewestFirst) {
  RepoRecord r1, r2;
  r1.ns = r2.ns = "acme";
  r1.name = "purged";
  r2.name = "other";
  auto repo = repos().Create(r1).value();
  auto other = repos().Create(r2).value();

  LfsPurgeRecord first;
  first.id = 777;  // ignored
  first.repo_id = repo.id;
  first.user_name = "alice";
  first.oids = {Sha256::Of("x"), Sha256::Of("y")};
  first.rewrite = true;
  first.refs = "refs/heads/main " + std::string(40, 'a') + " " + std::string(40, 'b') + "\n" +
               "refs/tags/v1 " + std::string(40, 'c') + " " + std::string(40, 'd') + "\n";
  first.created_at = 1700000001;
  LfsPurgeRecord second;
  second.repo_id = repo.id;
  second.user_name = "bob";
  second.oids = {Sha256::Of("z")};
  second.rewrite = false;
  second.created_at = 1700000002;
  LfsPurgeRecord elsewhere = second;
  elsewhere.repo_id = other.id;
  elsewhere.user_name = "carol";

  auto id1 = lfs().RecordPurge(first);
  ASSERT_TRUE(id1.has_value()) << id1.error().message;
  auto id2 = lfs().RecordPurge(second);
  ASSERT_TRUE(id2.has_value()) << id2.error().message;
  auto id3 = lfs().RecordPurge(elsewhere);
  ASSERT_TRUE(id3.has_value()) << id3.error().message;
  EXPECT_NE(*id1, *id2);
  EXPECT_NE(*id2, *id3);
  EXPECT_NE(*id1, 777);

  auto list = lfs().ListPurges(repo.id, 10);
  ASSERT_TRUE(list.has_value()) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  const LfsPurgeRecord& newest = (*list)[0];
  EXPECT_EQ(newest.id, *id2);
  EXPECT_EQ(newest.repo_id, repo.id);
  EXPECT_EQ(newest.user_name, "bob");
  EXPECT_EQ(newest.oids, std::vector<Sha256>{Sha256::Of("z")});
  EXPECT_FALSE(newest.rewrite);
  EXPECT_EQ(newest.refs, "");
  EXPECT_EQ(newest.created_at, 1700000002);
  const LfsPurgeRecord& oldest = (*list)[1];
  EXPECT_EQ(oldest.id, *id1);
  EXPECT_EQ(oldest.repo_id, repo.id);
  EXPECT_EQ(oldest.user_name, "alice");
  EXPECT_EQ(oldest.oids, (std::vector<Sha256>{Sha256::Of("x"), Sha256::Of("y")}));
  EXPECT_TRUE(oldest.rewrite);
  EXPECT_EQ(oldest.refs, first.refs);
  EXPECT_EQ(oldest.created_at, 1700000001);

  auto limited = lfs().ListPurges(repo.id, 1).value();
  ASSERT_EQ(limited.size(), 1u);
  EXPECT_EQ(limited[0].id, *id2);

  auto theirs = lfs().ListPurges(other.id, 10).value();
  ASSERT_EQ(theirs.size(), 1u);
  EXPECT_EQ(theirs[0].id, *id3);
  EXPECT_EQ(theirs[0].user_name, "carol");
}

TEST_P(LfsStoreTest, PurgesNeedTheirRepoAndGoWithIt) {
  RepoRecord in;
  in.ns = "acme";
  in.name = "gone";
  auto repo = repos().Create(in).value();
  LfsPurgeRecord p;
  p.repo_id = 4242;
  p.user_name = "alice";
  p.oids = {Sha256::Of("x")};
  p.created_at = 1700000001;
  auto missing = lfs().RecordPurge(p);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
  EXPECT_TRUE(lfs().ListPurges(4242, 10).value().empty());

  p.repo_id = repo.id;
  ASSERT_TRUE(lfs().RecordPurge(p).has_value());
  ASSERT_EQ(lfs().ListPurges(repo.id, 10).value().size(), 1u);
  ASSERT_TRUE(repos().Delete(repo.Id()).has_value());
  EXPECT_TRUE(lfs().ListPurges(repo.id, 10).value().empty());
  // Not merely hidden: the rows are gone.
  auto c = stores_.pool->Read().value();
  auto q = c->Prepare("SELECT COUNT(*) FROM lfs_purges").value();
  ASSERT_TRUE(q.Step().value());
  EXPECT_EQ(q.Int(0), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, LfsStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

// MirrorStore's conformance suite (db/mirror_store.h), on each engine; and the repos'
// is_mirror mark (RepoStore::SetMirror).

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class MirrorStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    UserRecord u;
    u.name = "ann";
    ASSERT_TRUE(users().CreateUser(u).has_value());
    for (auto [name, rec] : {std::pair{"a", &a_}, std::pair{"b", &b_}}) {
      RepoRecord r;
      r.ns = "ann";
      r.name = name;
      *rec = repos().Create(r).value();
    }
  }
  static MirrorRecord Pull(int64_t repo_id, int64_t next) {
    MirrorRecord m;
    m.repo_id = repo_id;
    m.direction = MirrorDirection::Pull;
    m.url = "https://upstream.example/ann/a";
    m.credential = "hf_secret";
    m.interval_s = 600;
    m.next_sync_at = next;
    return m;
  }
  RepoRecord a_, b_;
};

TEST_P(MirrorStoreTest, AddGetAndOnePullPerRepo) {
  auto added = mirrors().Add(Pull(a_.id, 100));
  ASSERT_TRUE(added.has_value()) << added.error().message;
  auto got = mirrors().Get(added->id).value();
  EXPECT_EQ(got.repo_id, a_.id);
  EXPECT_EQ(got.direction, MirrorDirection::Pull);
  EXPECT_EQ(got.url, "https://upstream.example/ann/a");
  EXPECT_EQ(got.credential, "hf_secret");
  EXPECT_EQ(got.interval_s, 600);
  EXPECT_EQ(got.next_sync_at, 100);
  EXPECT_GT(got.created_at, 0);
  EXPECT_FALSE(got.last_sync_at || got.last_success_at);
  EXPECT_EQ(got.failures, 0);
  EXPECT_FALSE(got.lazy_lfs);

  auto second = mirrors().Add(Pull(a_.id, 100));
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::Conflict);
  // Push mirrors are many.
  MirrorRecord push = Pull(a_.id, 0);
  push.direction = MirrorDirection::Push;
  ASSERT_TRUE(mirrors().Add(push).has_value());
  ASSERT_TRUE(mirrors().Add(push).has_value());
  auto all = mirrors().ForRepo(a_.id).value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].direction, MirrorDirection::Pull);
  EXPECT_EQ(all[1].direction, MirrorDirection::Push);
  EXPECT_TRUE(mirrors().ForRepo(b_.id).value().empty());

  MirrorRecord gone = Pull(9999999, 0);
  EXPECT_EQ(mirrors().Add(gone).error().code, ErrorCode::NotFound);
  EXPECT_EQ(mirrors().Get(9999999).error().code, ErrorCode::NotFound);
}

TEST_P(MirrorStoreTest, DuePullsAndRecordSync) {
  auto a = mirrors().Add(Pull(a_.id, 100)).value();
  auto b = mirrors().Add(Pull(b_.id, 50)).value();
  MirrorRecord push = Pull(a_.id, 0);
  push.direction = MirrorDirection::Push;
  ASSERT_TRUE(mirrors().Add(push).has_value());

  auto due = mirrors().DuePulls(100, 10).value();
  ASSERT_EQ(due.size(), 2u);   // the push mirror is never due
  EXPECT_EQ(due[0].id, b.id);  // soonest first
  EXPECT_EQ(due[1].id, a.id);
  EXPECT_EQ(mirrors().DuePulls(99, 10).value().size(), 1u);
  EXPECT_EQ(mirrors().DuePulls(100, 1).value().size(), 1u);
  // A pull-through cache's repo is revalidated when read, never by the schedule.
  RepoRecord c;
  c.type = RepoType::Model;
  c.ns = "ann";
  c.name = "cached";
  c = repos().Create(c).value();
  MirrorRecord cache = Pull(c.id, 0);
  cache.lazy_lfs = true;
  ASSERT_TRUE(mirrors().Add(cache).has_value());
  EXPECT_TRUE(mirrors().Get(mirrors().ForRepo(c.id).value().at(0).id).value().lazy_lfs);
  EXPECT_EQ(mirrors().DuePulls(100, 10).value().size(), 2u);

  ASSERT_TRUE(mirrors().RecordSync(a.id, 200, "upstream unreachable", 260).has_value());
  ASSERT_TRUE(mirrors().RecordSync(a.id, 270, "upstream unreachable", 390).has_value());
  auto failed = mirrors().Get(a.id).value();
  EXPECT_EQ(failed.failures, 2);
  EXPECT_EQ(failed.last_error, "upstream unreachable");
  EXPECT_EQ(failed.last_sync_at, 270);
  EXPECT_FALSE(failed.last_success_at);
  EXPECT_EQ(failed.next_sync_at, 390);

  ASSERT_TRUE(mirrors().RecordSync(a.id, 400, "", 1000).has_value());
  auto ok = mirrors().Get(a.id).value();
  EXPECT_EQ(ok.failures, 0);
  EXPECT_EQ(ok.last_error, "");
  EXPECT_EQ(ok.last_success_at, 400);
  EXPECT_EQ(ok.next_sync_at, 1000);
  EXPECT_EQ(mirrors().RecordSync(9999999, 1, "", 2).error().code, ErrorCode::NotFound);
}

TEST_P(MirrorStoreTest, DeletingTheRepoOrTheMirror) {
  auto a = mirrors().Add(Pull(a_.id, 100)).value();
  auto b = mirrors().Add(Pull(b_.id, 100)).value();
  ASSERT_TRUE(mirrors().Delete(a.id).has_value());
  EXPECT_EQ(mirrors().Delete(a.id).error().code, ErrorCode::NotFound);
  ASSERT_TRUE(repos().Delete(b_.Id()).has_value());
  EXPECT_EQ(mirrors().Get(b.id).error().code, ErrorCode::NotFound);
}

TEST_P(MirrorStoreTest, ReposCarryTheMirrorMark) {
  EXPECT_FALSE(repos().Find(a_.Id()).value().is_mirror);
  ASSERT_TRUE(repos().SetMirror(a_.id, true).has_value());
  EXPECT_TRUE(repos().Find(a_.Id()).value().is_mirror);
  EXPECT_TRUE(repos().FindById(a_.id).value().is_mirror);
  EXPECT_FALSE(repos().Find(b_.Id()).value().is_mirror);
  ASSERT_TRUE(repos().SetMirror(a_.id, false).has_value());
  EXPECT_FALSE(repos().Find(a_.Id()).value().is_mirror);
  EXPECT_EQ(repos().SetMirror(9999999, true).error().code, ErrorCode::RepoNotFound);
}

TEST_P(MirrorStoreTest, UpstreamTokensAndTheRestrictedMirrorsThatUseThem) {
  const int64_t ann = users().FindUserByName("ann").value().id;
  UserRecord bob;
  bob.name = "bob";
  const int64_t bob_id = users().CreateUser(bob).value().id;
  const std::string hub = "https://upstream.example";
  EXPECT_FALSE(mirrors().GetUpstreamToken(ann, hub).value());
  ASSERT_TRUE(mirrors().PutUpstreamToken({ann, hub, "hf_ann1", "ann-up", 0}).has_value());
  ASSERT_TRUE(mirrors().PutUpstreamToken({bob_id, hub, "hf_bob", "", 5}).has_value());
  ASSERT_TRUE(mirrors().PutUpstreamToken({ann, "http://b.example", "hf_annb", "", 7}).has_value());
  auto got = mirrors().GetUpstreamToken(ann, hub).value();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->token, "hf_ann1");
  EXPECT_EQ(got->upstream_user, "ann-up");
  EXPECT_GT(got->created_at, 0);
  auto listed = mirrors().ListUpstreamTokens(ann).value();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].upstream, "http://b.example");  // by upstream
  EXPECT_EQ(listed[1].upstream, hub);

  // A restricted mirror fetching with ann's token follows her replacing it, and loses it
  // when she deletes it; an unrestricted one holding the same string is left alone.
  MirrorRecord restricted = Pull(a_.id, 0);
  restricted.lazy_lfs = restricted.restricted = true;
  restricted.credential = "hf_ann1";
  auto r = mirrors().Add(restricted).value();
  EXPECT_TRUE(mirrors().Get(r.id).value().restricted);
  MirrorRecord plain = Pull(b_.id, 0);
  plain.credential = "hf_ann1";
  auto p = mirrors().Add(plain).value();
  EXPECT_FALSE(p.restricted);
  ASSERT_TRUE(mirrors().PutUpstreamToken({ann, hub, "hf_ann2", "ann-up", 0}).has_value());
  EXPECT_EQ(mirrors().Get(r.id).value().credential, "hf_ann2");
  EXPECT_EQ(mirrors().Get(p.id).value().credential, "hf_ann1");
  EXPECT_EQ(mirrors().GetUpstreamToken(ann, hub).value()->token, "hf_ann2");
  ASSERT_TRUE(mirrors().DeleteUpstreamToken(ann, hub).has_value());
  EXPECT_EQ(mirrors().Get(r.id).value().credential, "");
  EXPECT_FALSE(mirrors().GetUpstreamToken(ann, hub).value());
  EXPECT_EQ(mirrors().DeleteUpstreamToken(ann, hub).error().code, ErrorCode::NotFound);
  EXPECT_EQ(mirrors().GetUpstreamToken(bob_id, hub).value()->token, "hf_bob");  // not bob's

  ASSERT_TRUE(mirrors().SetCredential(r.id, "hf_bob").has_value());
  EXPECT_EQ(mirrors().Get(r.id).value().credential, "hf_bob");
  EXPECT_EQ(mirrors().SetCredential(9999999, "x").error().code, ErrorCode::NotFound);
}

INSTANTIATE_TEST_SUITE_P(Engines, MirrorStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

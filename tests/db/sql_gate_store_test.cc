// GateStore's conformance suite (db/gate_store.h), on each engine; and the repos' gated
// mode (RepoStore::SetGated).

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class GateStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (auto [name, id] :
         {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}, std::pair{"cat", &cat_}}) {
      UserRecord u;
      u.name = name;
      u.fullname = std::string(name) + " full";
      *id = users().CreateUser(u).value().id;
    }
    RepoRecord r;
    r.ns = "ann";
    r.name = "m";
    repo_ = repos().Create(r).value();
  }
  AccessRequestRecord Ask(int64_t user, int64_t at) const {
    AccessRequestRecord a;
    a.repo_id = repo_.id;
    a.user_id = user;
    a.fields = R"({"company":"acme"})";
    a.created_at = at;
    return a;
  }
  int64_t ann_ = 0, bob_ = 0, cat_ = 0;
  RepoRecord repo_;
};

TEST_P(GateStoreTest, StatusNamesRoundTrip) {
  for (auto s : {AccessStatus::Pending, AccessStatus::Accepted, AccessStatus::Rejected}) {
    EXPECT_EQ(ParseAccessStatus(AccessStatusName(s)), s);
  }
  EXPECT_FALSE(ParseAccessStatus("Accepted").has_value());
  EXPECT_FALSE(ParseAccessStatus("").has_value());
}

TEST_P(GateStoreTest, TheRepoKeepsItsGatedMode) {
  EXPECT_EQ(repos().FindById(repo_.id).value().gated, "");
  ASSERT_TRUE(repos().SetGated(repo_.id, "manual").has_value());
  EXPECT_EQ(repos().FindById(repo_.id).value().gated, "manual");
  EXPECT_EQ(repos().Find({RepoType::Model, "ann", "m"}).value().gated, "manual");
  ASSERT_TRUE(repos().SetGated(repo_.id, "").has_value());
  EXPECT_EQ(repos().FindById(repo_.id).value().gated, "");
  EXPECT_EQ(repos().SetGated(9999999, "auto").error().code, ErrorCode::RepoNotFound);
}

TEST_P(GateStoreTest, OneRequestPerUserAndAskingAgainKeepsTheFirst) {
  EXPECT_FALSE(gates().Get(repo_.id, bob_).value().has_value());
  auto first = gates().Insert(Ask(bob_, 100));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_TRUE(first->second);
  EXPECT_EQ(first->first.status, AccessStatus::Pending);
  EXPECT_EQ(first->first.fields, R"({"company":"acme"})");
  EXPECT_EQ(first->first.created_at, 100);
  EXPECT_EQ(first->first.updated_at, 100);
  EXPECT_EQ(first->first.user_name, "bob");
  EXPECT_EQ(first->first.user_fullname, "bob full");

  auto again = Ask(bob_, 200);
  again.status = AccessStatus::Accepted;
  again.fields = "{}";
  auto second = gates().Insert(again);
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(second->second);
  EXPECT_EQ(second->first.status, AccessStatus::Pending);
  EXPECT_EQ(second->first.created_at, 100);
  EXPECT_EQ(second->first.fields, R"({"company":"acme"})");

  EXPECT_EQ(gates().Insert(Ask(9999999, 1)).error().code, ErrorCode::NotFound);
  auto no_repo = Ask(bob_, 1);
  no_repo.repo_id = 9999999;
  EXPECT_EQ(gates().Insert(no_repo).error().code, ErrorCode::NotFound);
}

TEST_P(GateStoreTest, StatusChangesKeepTheReasonOnlyWhereGiven) {
  ASSERT_TRUE(gates().Insert(Ask(bob_, 100)).has_value());
  ASSERT_TRUE(gates()
                  .SetStatus(repo_.id, bob_, AccessStatus::Rejected, "not a researcher", 150)
                  .has_value());
  auto r = gates().Get(repo_.id, bob_).value().value();
  EXPECT_EQ(r.status, AccessStatus::Rejected);
  EXPECT_EQ(r.reason, "not a researcher");
  EXPECT_EQ(r.created_at, 100);
  EXPECT_EQ(r.updated_at, 150);
  ASSERT_TRUE(gates().SetStatus(repo_.id, bob_, AccessStatus::Accepted, "", 160).has_value());
  r = gates().Get(repo_.id, bob_).value().value();
  EXPECT_EQ(r.status, AccessStatus::Accepted);
  EXPECT_EQ(r.reason, "");
  EXPECT_FALSE(r.granted);
  EXPECT_EQ(gates().SetStatus(repo_.id, cat_, AccessStatus::Accepted, "", 1).error().code,
            ErrorCode::NotFound);
}

TEST_P(GateStoreTest, GrantAcceptsWithOrWithoutARequest) {
  ASSERT_TRUE(gates().Grant(repo_.id, cat_, 300).has_value());
  auto r = gates().Get(repo_.id, cat_).value().value();
  EXPECT_EQ(r.status, AccessStatus::Accepted);
  EXPECT_TRUE(r.granted);
  EXPECT_EQ(r.created_at, 300);

  ASSERT_TRUE(gates().Insert(Ask(bob_, 100)).has_value());
  ASSERT_TRUE(gates().SetStatus(repo_.id, bob_, AccessStatus::Rejected, "no", 150).has_value());
  ASSERT_TRUE(gates().Grant(repo_.id, bob_, 310).has_value());
  r = gates().Get(repo_.id, bob_).value().value();
  EXPECT_EQ(r.status, AccessStatus::Accepted);
  EXPECT_EQ(r.reason, "");
  EXPECT_FALSE(r.granted) << "bob asked: his request was accepted, not granted unasked";
  EXPECT_EQ(r.created_at, 100);
  EXPECT_EQ(r.updated_at, 310);

  EXPECT_EQ(gates().Grant(repo_.id, 9999999, 1).error().code, ErrorCode::NotFound);
  EXPECT_EQ(gates().Grant(9999999, bob_, 1).error().code, ErrorCode::NotFound);
}

TEST_P(GateStoreTest, ListsPageByStatusOldestFirst) {
  ASSERT_TRUE(gates().Insert(Ask(cat_, 100)).has_value());
  ASSERT_TRUE(gates().Insert(Ask(bob_, 100)).has_value());
  ASSERT_TRUE(gates().Insert(Ask(ann_, 50)).has_value());
  ASSERT_TRUE(gates().SetStatus(repo_.id, ann_, AccessStatus::Accepted, "", 60).has_value());

  auto pending = gates().List(repo_.id, AccessStatus::Pending, 0, 0, 10).value();
  ASSERT_EQ(pending.size(), 2u);
  // Same second: the user id breaks the tie, so pages never skip or repeat one.
  EXPECT_EQ(pending[0].user_name, bob_ < cat_ ? "bob" : "cat");
  auto page1 = gates().List(repo_.id, AccessStatus::Pending, 0, 0, 1).value();
  ASSERT_EQ(page1.size(), 1u);
  auto page2 = gates()
                   .List(repo_.id, AccessStatus::Pending, page1[0].created_at, page1[0].user_id, 1)
                   .value();
  ASSERT_EQ(page2.size(), 1u);
  EXPECT_NE(page1[0].user_id, page2[0].user_id);
  EXPECT_TRUE(gates()
                  .List(repo_.id, AccessStatus::Pending, page2[0].created_at, page2[0].user_id, 1)
                  .value()
                  .empty());

  auto accepted = gates().List(repo_.id, AccessStatus::Accepted, 0, 0, 10).value();
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].user_name, "ann");
  EXPECT_TRUE(gates().List(repo_.id, AccessStatus::Rejected, 0, 0, 10).value().empty());
}

TEST_P(GateStoreTest, DeletingTheRepoDropsItsRequests) {
  ASSERT_TRUE(gates().Insert(Ask(bob_, 100)).has_value());
  ASSERT_TRUE(repos().Delete(repo_.Id()).has_value());
  EXPECT_FALSE(gates().Get(repo_.id, bob_).value().has_value());
  // A repo made again under the same name starts with no requests.
  RepoRecord r;
  r.ns = "ann";
  r.name = "m";
  auto again = repos().Create(r).value();
  EXPECT_FALSE(gates().Get(again.id, bob_).value().has_value());
}

INSTANTIATE_TEST_SUITE_P(Engines, GateStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

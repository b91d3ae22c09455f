// SqlRegistryStore (db/registry_store.h): models, versions numbered per model and never
// reused, tags, aliases moved atomically with their log, visibility of private models and
// of models pinning private repos, listings' filters and pages, and roles.

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "db/test_db.h"

namespace hangar::db {
namespace {

const std::string kCommitA(40, 'a');
const std::string kCommitB(40, 'b');

class RegistryStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    alice_ = MakeUser("alice");
    bob_ = MakeUser("bob");
    RepoRecord in;
    in.type = RepoType::Model;
    in.ns = "alice";
    in.name = "bert";
    repo_ = repos().Create(in).value().id;
  }
  int64_t MakeUser(const std::string& name) {
    UserRecord u;
    u.name = name;
    return users().CreateUser(u).value().id;
  }
  int64_t MakeModel(const std::string& name, int64_t owner, bool is_private = false) {
    ModelRecord m;
    m.name = name;
    m.owner_id = owner;
    m.is_private = is_private;
    m.created_at = 1000;
    auto id = registry().CreateModel(m);
    EXPECT_TRUE(id.has_value()) << id.error().message;
    return id ? *id : 0;
  }
  int64_t MakeVersion(int64_t model, const std::string& commit = kCommitA) {
    VersionRecord v;
    v.model_id = model;
    v.repo_id = repo_;
    v.repo_type = "model";
    v.repo = "alice/bert";
    v.commit = commit;
    v.created_at = 2000;
    auto n = registry().CreateVersion(v);
    EXPECT_TRUE(n.has_value()) << n.error().message;
    return n ? *n : 0;
  }
  std::vector<std::string> Names(const ModelQuery& q) {
    std::vector<std::string> out;
    auto models = registry().ListModels(q);  // kept: value() refers into it
    EXPECT_TRUE(models.has_value()) << models.error().message;
    if (models)
      for (const auto& m : *models) out.push_back(m.name);
    return out;
  }

  int64_t alice_ = 0, bob_ = 0, repo_ = 0;
};

TEST_P(RegistryStoreTest, CreatesAndReadsAModelWithItsTags) {
  ModelRecord m;
  m.name = "fraud";
  m.owner_id = alice_;
  m.description = "scores payments";
  m.created_by = alice_;
  m.created_at = 1234;
  m.tags = {{"team", "risk"}, {"task", "classification"}};
  ASSERT_TRUE(registry().CreateModel(m).has_value());
  auto got = registry().GetModel("fraud").value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->description, "scores payments");
  EXPECT_EQ(got->created_at, 1234);
  EXPECT_EQ(got->updated_at, 1234);
  EXPECT_EQ(got->tags, m.tags);
  EXPECT_TRUE(got->aliases.empty());
  EXPECT_FALSE(registry().GetModel("nope").value().has_value());
}

TEST_P(RegistryStoreTest, RefusesADuplicateNameAndAMissingOwner) {
  MakeModel("fraud", alice_);
  ModelRecord m;
  m.name = "fraud";
  m.owner_id = bob_;
  EXPECT_EQ(registry().CreateModel(m).error().code, ErrorCode::Conflict);
  m.name = "other";
  m.owner_id = 9999;
  EXPECT_EQ(registry().CreateModel(m).error().code, ErrorCode::NotFound);
}

TEST_P(RegistryStoreTest, NumbersVersionsPerModelAndNeverReusesOne) {
  int64_t a = MakeModel("a", alice_), b = MakeModel("b", alice_);
  EXPECT_EQ(MakeVersion(a), 1);
  EXPECT_EQ(MakeVersion(a, kCommitB), 2);
  EXPECT_EQ(MakeVersion(b), 1);
  ASSERT_TRUE(registry().DeleteVersion(a, 2, alice_, "alice", 3000).has_value());
  EXPECT_EQ(MakeVersion(a), 3);
  EXPECT_FALSE(registry().GetVersion(a, 2).value().has_value());
  auto v = registry().GetVersion(a, 3).value();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->repo, "alice/bert");
  EXPECT_EQ(v->repo_id, repo_);
  EXPECT_EQ(v->status, "READY");
  VersionRecord missing;
  missing.model_id = 9999;
  missing.repo = "alice/bert";
  missing.commit = kCommitA;
  missing.repo_type = "model";
  EXPECT_EQ(registry().CreateVersion(missing).error().code, ErrorCode::NotFound);
}

TEST_P(RegistryStoreTest, KeepsLineageAndTagsOfAVersion) {
  int64_t base = MakeModel("base", alice_), m = MakeModel("tuned", alice_);
  MakeVersion(base);
  VersionRecord v;
  v.model_id = m;
  v.repo_id = repo_;
  v.repo_type = "model";
  v.repo = "alice/bert";
  v.commit = kCommitB;
  v.run_link = "https://ci.example/run/7";
  v.base_model_id = base;
  v.base_version = 1;
  v.datasets = {{repo_, "alice/squad", kCommitA}, {0, "gone/ds", kCommitB}};
  v.tags = {{"accuracy", "0.91"}};
  ASSERT_EQ(registry().CreateVersion(v).value(), 1);
  auto got = registry().GetVersion(m, 1).value().value();
  EXPECT_EQ(got.base_model_id, base);
  EXPECT_EQ(got.base_version, 1);
  EXPECT_EQ(got.run_link, "https://ci.example/run/7");
  ASSERT_EQ(got.datasets.size(), 2u);
  EXPECT_EQ(got.datasets[0].repo, "alice/squad");
  EXPECT_EQ(got.datasets[1].repo_id, 0);
  EXPECT_EQ(got.tags, v.tags);
  ASSERT_TRUE(registry().SetVersionTag(m, 1, "accuracy", "0.92", 5).has_value());
  ASSERT_TRUE(registry().SetVersionTag(m, 1, "owner", std::string("risk"), 5).has_value());
  EXPECT_EQ(registry().GetVersion(m, 1).value()->tags.at("accuracy"), "0.92");
  ASSERT_TRUE(registry().SetVersionTag(m, 1, "owner", std::nullopt, 5).has_value());
  EXPECT_EQ(registry().SetVersionTag(m, 1, "owner", std::nullopt, 5).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(registry().SetVersionTag(m, 7, "k", "v", 5).error().code, ErrorCode::NotFound);
}

TEST_P(RegistryStoreTest, MovesAnAliasAndLogsEveryMove) {
  int64_t m = MakeModel("fraud", alice_);
  MakeVersion(m);
  MakeVersion(m, kCommitB);
  EXPECT_EQ(registry().MoveAlias(m, "champion", 1, alice_, "alice", 10).value(), 0);
  EXPECT_EQ(registry().MoveAlias(m, "champion", 2, bob_, "bob", 20).value(), 1);
  EXPECT_EQ(registry().MoveAlias(m, "champion", 9, bob_, "bob", 30).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(registry().GetModel("fraud").value()->aliases.at("champion"), 2);
  EXPECT_EQ(registry().MoveAlias(m, "champion", std::nullopt, bob_, "bob", 40).value(), 2);
  EXPECT_EQ(registry().MoveAlias(m, "champion", std::nullopt, bob_, "bob", 50).error().code,
            ErrorCode::NotFound);
  auto log = registry().ListAliasEvents(m, 0, 10).value();
  ASSERT_EQ(log.size(), 3u);  // the refused moves left nothing
  EXPECT_EQ(log[0].from_version, 2);
  EXPECT_EQ(log[0].to_version, 0);
  EXPECT_EQ(log[1].actor, "bob");
  EXPECT_EQ(log[1].from_version, 1);
  EXPECT_EQ(log[1].to_version, 2);
  EXPECT_EQ(log[2].at, 10);
  auto older = registry().ListAliasEvents(m, log[1].id, 10).value();
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].id, log[2].id);
}

TEST_P(RegistryStoreTest, DeletingAVersionDeletesAndLogsItsAliases) {
  int64_t m = MakeModel("fraud", alice_);
  MakeVersion(m);
  ASSERT_TRUE(registry().MoveAlias(m, "staging", 1, alice_, "alice", 10).has_value());
  ASSERT_TRUE(registry().DeleteVersion(m, 1, bob_, "bob", 20).has_value());
  EXPECT_TRUE(registry().GetModel("fraud").value()->aliases.empty());
  auto log = registry().ListAliasEvents(m, 0, 10).value();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].to_version, 0);
  EXPECT_EQ(log[0].actor, "bob");
  EXPECT_EQ(registry().DeleteVersion(m, 1, bob_, "bob", 20).error().code, ErrorCode::NotFound);
}

TEST_P(RegistryStoreTest, ConcurrentRegistrationsGetDistinctNumbers) {
  int64_t m = MakeModel("busy", alice_);
  std::vector<std::thread> threads;
  std::mutex mu;
  std::set<int64_t> seen;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        int64_t n = MakeVersion(m);
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(n);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 40u);
  EXPECT_EQ(*seen.rbegin(), 40);
}

TEST_P(RegistryStoreTest, ListsWithFiltersPagesAndVisibility) {
  int64_t a = MakeModel("alpha-fraud", alice_);
  MakeModel("beta", bob_);
  MakeModel("gamma-secret", bob_, /*is_private=*/true);
  int64_t d = MakeModel("delta", bob_);
  ASSERT_TRUE(registry().SetModelTag(a, "team", "risk", 5).has_value());
  MakeVersion(d);  // pins alice/bert, private below
  ASSERT_TRUE(repos().SetPrivate(repo_, true).has_value());

  ModelQuery all;
  all.include_all_private = true;
  EXPECT_EQ(Names(all), (std::vector<std::string>{"alpha-fraud", "beta", "delta", "gamma-secret"}));
  ModelQuery anon;
  EXPECT_EQ(Names(anon), (std::vector<std::string>{"alpha-fraud", "beta"}));
  EXPECT_FALSE(registry().ListModels(anon).value()[0].pins_private);
  ModelQuery bobs = anon;
  bobs.readable_owner_ids = {bob_};
  EXPECT_EQ(Names(bobs),
            (std::vector<std::string>{"alpha-fraud", "beta", "delta", "gamma-secret"}));
  ModelQuery owner = all;
  owner.owner = "bob";
  EXPECT_EQ(Names(owner), (std::vector<std::string>{"beta", "delta", "gamma-secret"}));
  ModelQuery search = all;
  search.name_like = "%FRAUD%";
  EXPECT_EQ(Names(search), (std::vector<std::string>{"alpha-fraud"}));
  ModelQuery tagged = all;
  tagged.tag_key = "team";
  EXPECT_EQ(Names(tagged), (std::vector<std::string>{"alpha-fraud"}));
  tagged.tag_value = "other";
  EXPECT_TRUE(Names(tagged).empty());
  ModelQuery page = all;
  page.limit = 2;
  page.offset = 2;
  EXPECT_EQ(Names(page), (std::vector<std::string>{"delta", "gamma-secret"}));
  ModelQuery newest = all;
  newest.newest_first = true;
  EXPECT_EQ(Names(newest)[0], "delta");  // its version moved updated_at
  EXPECT_TRUE(registry().GetModel("delta").value()->pins_private);

  VersionQuery versions;
  EXPECT_TRUE(registry().ListVersions(versions).value().empty());  // delta's is private
  versions.readable_owner_ids = {bob_};
  EXPECT_EQ(registry().ListVersions(versions).value().size(), 1u);
}

TEST_P(RegistryStoreTest, RenamesUpdatesAndDeletesAModel) {
  int64_t m = MakeModel("old", alice_);
  MakeModel("taken", alice_);
  EXPECT_EQ(registry().UpdateModel(m, std::nullopt, std::string("taken"), 5).error().code,
            ErrorCode::Conflict);
  ASSERT_TRUE(registry().UpdateModel(m, std::string("d"), std::string("new"), 6).has_value());
  auto got = registry().GetModel("new").value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->description, "d");
  EXPECT_EQ(got->updated_at, 6);
  EXPECT_FALSE(registry().GetModel("old").value().has_value());
  MakeVersion(m);
  ASSERT_TRUE(registry().MoveAlias(m, "champion", 1, alice_, "alice", 7).has_value());
  ASSERT_TRUE(registry().DeleteModel(m).has_value());
  EXPECT_FALSE(registry().GetModel("new").value().has_value());
  EXPECT_FALSE(registry().GetVersion(m, 1).value().has_value());
  EXPECT_EQ(registry().DeleteModel(m).error().code, ErrorCode::NotFound);
  EXPECT_EQ(registry().UpdateModel(m, std::string("x"), std::nullopt, 8).error().code,
            ErrorCode::NotFound);
}

TEST_P(RegistryStoreTest, GivesAndTakesRoles) {
  int64_t m = MakeModel("fraud", alice_);
  EXPECT_FALSE(registry().GetRole(m, bob_).value().has_value());
  ASSERT_TRUE(registry().SetRole(m, bob_, std::string("deployer")).has_value());
  EXPECT_EQ(registry().GetRole(m, bob_).value(), std::optional<std::string>("deployer"));
  ASSERT_TRUE(registry().SetRole(m, bob_, std::nullopt).has_value());
  EXPECT_FALSE(registry().GetRole(m, bob_).value().has_value());
  EXPECT_EQ(registry().SetRole(m, 9999, std::string("deployer")).error().code, ErrorCode::NotFound);
}

// The parts of a page are read for all its models at once (IN lists padded to a few
// sizes): each model still gets exactly its own.
TEST_P(RegistryStoreTest, APagesTagsAliasesAndDatasetsGoToTheirOwnRecords) {
  for (int i = 0; i < 20; ++i) {
    int64_t m = MakeModel("m" + std::to_string(100 + i), alice_);
    ASSERT_TRUE(registry().SetModelTag(m, "i", std::to_string(i), 5).has_value());
    MakeVersion(m);
    if (i % 3 == 0) {
      ASSERT_TRUE(registry().MoveAlias(m, "champion", 1, alice_, "a", 6).has_value());
    }
    ASSERT_TRUE(registry().SetVersionTag(m, 1, "v", std::to_string(i), 7).has_value());
  }
  ModelQuery q;
  q.limit = 17;  // past the first padded size, short of a page
  auto models = registry().ListModels(q);
  ASSERT_TRUE(models.has_value());
  ASSERT_EQ(models->size(), 17u);
  for (size_t i = 0; i < models->size(); ++i) {
    const auto& m = (*models)[i];
    EXPECT_EQ(m.tags, (std::map<std::string, std::string>{{"i", std::to_string(i)}})) << m.name;
    EXPECT_EQ(m.aliases.count("champion"), i % 3 == 0 ? 1u : 0u) << m.name;
  }
  VersionQuery vq;
  vq.limit = 20;
  auto versions = registry().ListVersions(vq);
  ASSERT_TRUE(versions.has_value());
  ASSERT_EQ(versions->size(), 20u);
  for (size_t i = 0; i < versions->size(); ++i)
    EXPECT_EQ((*versions)[i].tags.at("v"), std::to_string(i));
}

TEST_P(RegistryStoreTest, CreatesAModelWithItsFirstVersionInOneTransaction) {
  ModelRecord m;
  m.name = "fresh";
  m.owner_id = alice_;
  m.created_at = 10;
  VersionRecord v;
  v.repo_id = repo_;
  v.repo_type = "model";
  v.repo = "alice/bert";
  v.commit = kCommitA;
  v.created_at = 10;
  int64_t id = registry().CreateModelWithVersion(m, v).value();
  auto first = registry().GetVersion(id, 1).value();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->commit, kCommitA);
  EXPECT_EQ(MakeVersion(id), 2);
  // A taken name writes neither.
  EXPECT_EQ(registry().CreateModelWithVersion(m, v).error().code, ErrorCode::Conflict);
  VersionQuery all;
  all.include_all_private = true;
  EXPECT_EQ(registry().ListVersions(all).value().size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Engines, RegistryStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

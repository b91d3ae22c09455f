// WebhookStore's conformance suite (db/webhook_store.h, migration 23), on each engine: the
// webhooks and their watches, the per-owner limit, which webhooks an event matches, the
// delivery log and its trimming, and the refs each repo was last seen with (recorded,
// unknown for repos older than the table, and claimed one ref at a time by compare-and-swap).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "db/test_db.h"

namespace hangar::db {
namespace {

using Heads = std::map<std::string, std::string>;

// 40 hex digits made of `c`: a commit id for the ref tests.
std::string Sha(char c) { return std::string(40, c); }

class WebhookStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure()) return;
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      *id = users().CreateUser(u).value().id;
    }
    RepoRecord r;
    r.type = RepoType::Model;
    r.ns = "ann";
    r.name = "m";
    repo_ = repos().Create(r).value();
    r.name = "other";
    other_ = repos().Create(r).value();
  }
  WebhookStore& hooks() { return *stores_.webhooks; }

  // A webhook of `owner` with the id "<24 hex from `n`>", created at `created_at`.
  static WebhookRecord Hook(int n, int64_t owner, std::vector<WebhookWatch> watched,
                            std::vector<std::string> domains = {"repo", "discussion"},
                            int64_t created_at = 1'700'000'000'000) {
    WebhookRecord w;
    char id[25];
    std::snprintf(id, sizeof id, "%024x", n);
    w.id = id;
    w.owner_id = owner;
    w.url = "https://example.com/hook/" + std::to_string(n);
    w.secret = "s" + std::to_string(n);
    w.domains = std::move(domains);
    w.watched = std::move(watched);
    w.created_at = created_at;
    w.updated_at = created_at;
    return w;
  }
  void Add(const WebhookRecord& w) {
    auto made = hooks().Create(w, 100);
    ASSERT_TRUE(made.has_value()) << made.error().message;
  }
  // The ids of what Matching answers for model ann/m and `domain`, sorted.
  std::vector<std::string> MatchIds(const WebhookTarget& t, const std::string& domain) {
    auto found = hooks().Matching(t, domain);
    EXPECT_TRUE(found.has_value()) << found.error().message;
    std::vector<std::string> ids;
    if (!found) return ids;
    for (const auto& w : *found) ids.push_back(w.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  // How many rows of `table` hold webhook `id` (straight from the database).
  int64_t RowsOf(const std::string& table, const std::string& id) {
    auto c = stores_.pool->Read().value();
    auto s = c->Prepare("SELECT COUNT(*) FROM " + table + " WHERE webhook_id = ?").value();
    s.Bind(1, id);
    EXPECT_TRUE(s.Step().value());
    return s.Int(0);
  }
  // Marks `repo_id` as older than the ref record (as migration 23 marks every repo it finds).
  void MarkUnknown(int64_t repo_id) {
    auto c = stores_.pool->Write().value();
    ASSERT_TRUE(
        c->Exec("INSERT INTO ref_heads_unknown (repo_id) VALUES (" + std::to_string(repo_id) + ")")
            .has_value());
  }
  Heads HeadsOf(int64_t repo_id) {
    auto h = hooks().RefHeads(repo_id);
    EXPECT_TRUE(h.has_value()) << h.error().message;
    EXPECT_TRUE(h.has_value() && h->has_value()) << "recorded";
    return h && *h ? **h : Heads{};
  }

  const WebhookTarget target_{"model", "ann/m", "ann"};
  int64_t ann_ = 0, bob_ = 0;
  RepoRecord repo_, other_;
};

TEST_P(WebhookStoreTest, CreateStoresEveryFieldAndGetReadsItBack) {
  WebhookRecord w = Hook(1, ann_, {{"model", "ann/m"}, {"user", "bob"}, {"dataset", "bob/d"}},
                         {"discussion"}, 1'700'000'000'123);
  w.updated_at = 1'700'000'000'456;
  w.disabled = true;
  Add(w);
  auto got = hooks().Get(w.id);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_EQ(got->id, w.id);
  EXPECT_EQ(got->owner_id, ann_);
  EXPECT_EQ(got->url, w.url);
  EXPECT_EQ(got->secret, "s1");
  EXPECT_EQ(got->domains, std::vector<std::string>{"discussion"});
  EXPECT_EQ(got->watched, w.watched) << "in the order given";
  EXPECT_TRUE(got->disabled);
  EXPECT_EQ(got->created_at, 1'700'000'000'123) << "milliseconds kept whole";
  EXPECT_EQ(got->updated_at, 1'700'000'000'456);

  WebhookRecord both = Hook(2, ann_, {{"org", "acme"}});
  both.secret = "";
  Add(both);
  auto got2 = hooks().Get(both.id).value();
  EXPECT_EQ(got2.domains, (std::vector<std::string>{"repo", "discussion"}));
  EXPECT_EQ(got2.secret, "");
  EXPECT_FALSE(got2.disabled);

  auto missing = hooks().Get("ffffffffffffffffffffffff");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
}

TEST_P(WebhookStoreTest, CreateStopsAtTheOwnersLimitAndNeedsTheOwner) {
  ASSERT_TRUE(hooks().Create(Hook(1, ann_, {{"user", "ann"}}), 2).has_value());
  ASSERT_TRUE(hooks().Create(Hook(2, ann_, {{"user", "ann"}}), 2).has_value());
  auto third = hooks().Create(Hook(3, ann_, {{"user", "ann"}}), 2);
  ASSERT_FALSE(third.has_value());
  EXPECT_EQ(third.error().code, ErrorCode::Conflict);
  EXPECT_EQ(hooks().Get(Hook(3, 0, {}).id).error().code, ErrorCode::NotFound) << "not added";
  EXPECT_EQ(RowsOf("webhook_watches", Hook(3, 0, {}).id), 0);
  EXPECT_EQ(hooks().ListByOwner(ann_).value().size(), 2u);
  // The limit is per owner.
  EXPECT_TRUE(hooks().Create(Hook(4, bob_, {{"user", "ann"}}), 2).has_value());

  auto orphan = hooks().Create(Hook(5, 987654321, {{"user", "ann"}}), 2);
  ASSERT_FALSE(orphan.has_value());
  EXPECT_EQ(orphan.error().code, ErrorCode::NotFound);
  EXPECT_EQ(hooks().Get(Hook(5, 0, {}).id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(RowsOf("webhook_watches", Hook(5, 0, {}).id), 0) << "all or nothing";
}

TEST_P(WebhookStoreTest, ListByOwnerIsOldestFirstWithTheWatches) {
  Add(Hook(1, ann_, {{"model", "ann/m"}}, {"repo"}, 1'700'000'000'300));
  Add(Hook(2, ann_, {{"user", "ann"}, {"org", "acme"}}, {"repo"}, 1'700'000'000'100));
  Add(Hook(3, bob_, {{"user", "bob"}}, {"repo"}, 1'700'000'000'050));
  Add(Hook(4, ann_, {{"user", "bob"}}, {"repo"}, 1'700'000'000'200));
  auto list = hooks().ListByOwner(ann_).value();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, Hook(2, 0, {}).id);
  EXPECT_EQ(list[1].id, Hook(4, 0, {}).id);
  EXPECT_EQ(list[2].id, Hook(1, 0, {}).id) << "by the millisecond, not the second";
  EXPECT_EQ(list[0].watched, (std::vector<WebhookWatch>{{"user", "ann"}, {"org", "acme"}}));
  EXPECT_EQ(list[2].watched, (std::vector<WebhookWatch>{{"model", "ann/m"}}));
  auto bobs = hooks().ListByOwner(bob_).value();
  ASSERT_EQ(bobs.size(), 1u);
  EXPECT_EQ(bobs[0].owner_id, bob_);
  EXPECT_TRUE(hooks().ListByOwner(987654321).value().empty());
}

TEST_P(WebhookStoreTest, UpdateReplacesTheFieldsAndTheWatches) {
  Add(Hook(1, ann_, {{"model", "ann/m"}, {"user", "ann"}}, {"repo", "discussion"}));
  WebhookRecord w = hooks().Get(Hook(1, 0, {}).id).value();
  w.url = "http://example.org/new";
  w.secret = "";
  w.domains = {"discussion"};
  w.watched = {{"org", "acme"}, {"model", "ann/other"}};
  w.disabled = true;
  w.updated_at = 1'700'000'999'999;
  ASSERT_TRUE(hooks().Update(w).has_value());

  auto got = hooks().Get(w.id).value();
  EXPECT_EQ(got.url, "http://example.org/new");
  EXPECT_EQ(got.secret, "");
  EXPECT_EQ(got.domains, std::vector<std::string>{"discussion"});
  EXPECT_EQ(got.watched, (std::vector<WebhookWatch>{{"org", "acme"}, {"model", "ann/other"}}));
  EXPECT_TRUE(got.disabled);
  EXPECT_EQ(got.updated_at, 1'700'000'999'999);
  EXPECT_EQ(got.created_at, 1'700'000'000'000) << "kept";
  EXPECT_EQ(got.owner_id, ann_) << "kept";
  EXPECT_EQ(RowsOf("webhook_watches", w.id), 2) << "the old watches are gone";

  // Enabled again, it matches through its new watches only.
  w.disabled = false;
  w.domains = {"repo"};
  ASSERT_TRUE(hooks().Update(w).has_value());
  EXPECT_TRUE(MatchIds(target_, "repo").empty()) << "ann/m and user ann are no longer watched";
  EXPECT_EQ(MatchIds({"model", "ann/other", "ann"}, "repo"), std::vector<std::string>{w.id});

  WebhookRecord ghost = Hook(9, ann_, {{"user", "ann"}});
  auto missing = hooks().Update(ghost);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
  EXPECT_EQ(RowsOf("webhook_watches", ghost.id), 0) << "nothing written for a missing webhook";
}

TEST_P(WebhookStoreTest, DeleteTakesTheWatchesAndDeliveriesWithIt) {
  WebhookRecord w = Hook(1, ann_, {{"model", "ann/m"}, {"user", "ann"}});
  WebhookRecord kept = Hook(2, ann_, {{"model", "ann/m"}});
  Add(w);
  Add(kept);
  for (const auto* x : {&w, &kept}) {
    WebhookDelivery d;
    d.webhook_id = x->id;
    d.event = "repo.content.update";
    d.repo = "models/ann/m";
    d.created_at = 1;
    ASSERT_TRUE(hooks().AddDelivery(d, 100).has_value());
  }
  ASSERT_EQ(RowsOf("webhook_deliveries", w.id), 1);

  EXPECT_TRUE(hooks().Delete(w.id).value());
  EXPECT_EQ(hooks().Get(w.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(RowsOf("webhook_watches", w.id), 0);
  EXPECT_EQ(RowsOf("webhook_deliveries", w.id), 0);
  EXPECT_TRUE(hooks().Deliveries(w.id, 10).value().empty());
  EXPECT_EQ(MatchIds(target_, "repo"), std::vector<std::string>{kept.id});
  EXPECT_FALSE(hooks().Delete(w.id).value()) << "the second time there is none";

  // The other webhook keeps its own.
  EXPECT_EQ(hooks().Deliveries(kept.id, 10).value().size(), 1u);
  EXPECT_EQ(RowsOf("webhook_watches", kept.id), 1);
}

TEST_P(WebhookStoreTest, MatchingFindsRepoAndNamespaceWatchesOfTheDomainOnce) {
  Add(Hook(1, ann_, {{"model", "ann/m"}}, {"repo"}));                   // the repo
  Add(Hook(2, bob_, {{"user", "ann"}}, {"repo", "discussion"}));        // its namespace
  Add(Hook(3, bob_, {{"org", "ann"}}, {"repo"}));                       // as an org
  Add(Hook(4, ann_, {{"model", "ann/m"}, {"user", "ann"}}, {"repo"}));  // both ways
  WebhookRecord off = Hook(5, ann_, {{"model", "ann/m"}}, {"repo"});    // disabled
  off.disabled = true;
  Add(off);
  Add(Hook(6, ann_, {{"dataset", "ann/m"}}, {"repo"}));                  // another type
  Add(Hook(7, ann_, {{"model", "ann/other"}}, {"repo"}));                // another repo
  Add(Hook(8, ann_, {{"model", "ann/m"}}, {"discussion"}));              // another domain
  Add(Hook(9, ann_, {{"user", "bob"}}, {"repo", "discussion"}));         // another namespace
  Add(Hook(10, ann_, {{"user", "ann/m"}, {"model", "ann"}}, {"repo"}));  // names mixed up

  auto id = [](int n) { return Hook(n, 0, {}).id; };
  EXPECT_EQ(MatchIds(target_, "repo"), (std::vector<std::string>{id(1), id(2), id(3), id(4)}));
  EXPECT_EQ(MatchIds(target_, "discussion"), (std::vector<std::string>{id(2), id(8)}));
  EXPECT_EQ(MatchIds({"dataset", "ann/m", "ann"}, "repo"),
            (std::vector<std::string>{id(2), id(3), id(4), id(6)}));
  EXPECT_EQ(MatchIds({"model", "bob/x", "bob"}, "discussion"), std::vector<std::string>{id(9)});
  EXPECT_TRUE(MatchIds({"space", "carol/s", "carol"}, "repo").empty());

  // Matching answers whole webhooks (their domains and url), not bare ids.
  auto found = hooks().Matching(target_, "discussion").value();
  ASSERT_EQ(found.size(), 2u);
  for (const auto& w : found) {
    EXPECT_FALSE(w.url.empty());
    EXPECT_NE(std::find(w.domains.begin(), w.domains.end(), "discussion"), w.domains.end());
  }

  // Enabling the disabled one brings it back.
  off.disabled = false;
  ASSERT_TRUE(hooks().Update(off).has_value());
  EXPECT_EQ(MatchIds(target_, "repo"),
            (std::vector<std::string>{id(1), id(2), id(3), id(4), id(5)}));
}

TEST_P(WebhookStoreTest, TheDeliveryLogKeepsTheNewestAndListsThemNewestFirst) {
  WebhookRecord w = Hook(1, ann_, {{"user", "ann"}});
  WebhookRecord other = Hook(2, ann_, {{"user", "ann"}});
  Add(w);
  Add(other);
  WebhookDelivery o;
  o.webhook_id = other.id;
  o.event = "repo.create";
  o.repo = "models/ann/other";
  ASSERT_TRUE(hooks().AddDelivery(o, 3).has_value());
  for (int i = 1; i <= 5; ++i) {
    WebhookDelivery d;
    d.webhook_id = w.id;
    d.event = "repo.content.update";
    d.repo = "models/ann/m";
    d.attempt = i;
    d.status = i == 5 ? 0 : 500 + i;
    d.error = i == 5 ? "no answer" : "the receiver answered " + std::to_string(500 + i);
    d.latency_ms = 10 * i;
    d.created_at = 1'700'000'000'000 + i;
    ASSERT_TRUE(hooks().AddDelivery(d, 3).has_value());
  }
  auto log = hooks().Deliveries(w.id, 10).value();
  ASSERT_EQ(log.size(), 3u) << "only the newest 3 are kept";
  EXPECT_EQ(log[0].attempt, 5);
  EXPECT_EQ(log[1].attempt, 4);
  EXPECT_EQ(log[2].attempt, 3);
  EXPECT_GT(log[0].id, log[1].id);
  EXPECT_GT(log[1].id, log[2].id);
  EXPECT_EQ(log[0].webhook_id, w.id);
  EXPECT_EQ(log[0].event, "repo.content.update");
  EXPECT_EQ(log[0].repo, "models/ann/m");
  EXPECT_EQ(log[0].status, 0);
  EXPECT_EQ(log[0].error, "no answer");
  EXPECT_EQ(log[0].latency_ms, 50);
  EXPECT_EQ(log[0].created_at, 1'700'000'000'005);
  EXPECT_EQ(log[1].status, 504);
  EXPECT_EQ(log[1].error, "the receiver answered 504");

  auto two = hooks().Deliveries(w.id, 2).value();
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].attempt, 5);
  EXPECT_EQ(two[1].attempt, 4);
  auto one = hooks().Deliveries(w.id, 1).value();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].attempt, 5);

  // Trimming one webhook's log leaves the other's.
  auto others = hooks().Deliveries(other.id, 10).value();
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0].event, "repo.create");
  EXPECT_EQ(others[0].attempt, 1);

  // A delivery of a webhook that is gone logs nothing.
  WebhookDelivery lost = o;
  lost.webhook_id = "eeeeeeeeeeeeeeeeeeeeeeee";
  (void)hooks().AddDelivery(lost, 3);
  EXPECT_TRUE(hooks().Deliveries(lost.webhook_id, 10).value().empty());
}

TEST_P(WebhookStoreTest, RefHeadsAreUnknownForOldReposAndRecordedForNewOnes) {
  auto fresh = hooks().RefHeads(repo_.id);
  ASSERT_TRUE(fresh.has_value()) << fresh.error().message;
  ASSERT_TRUE(fresh->has_value()) << "a repo made after migration 23 has a record";
  EXPECT_TRUE((*fresh)->empty());

  MarkUnknown(other_.id);
  auto old = hooks().RefHeads(other_.id);
  ASSERT_TRUE(old.has_value()) << old.error().message;
  EXPECT_FALSE(old->has_value()) << "a repo older than the table: never recorded";

  // Setting the refs starts the record, even an empty one.
  ASSERT_TRUE(hooks().SetRefHeads(other_.id, {}).has_value());
  EXPECT_TRUE(HeadsOf(other_.id).empty());
  MarkUnknown(other_.id);
  ASSERT_TRUE(
      hooks()
          .SetRefHeads(other_.id, {{"refs/heads/main", Sha('a')}, {"refs/tags/v1", Sha('b')}})
          .has_value());
  EXPECT_EQ(HeadsOf(other_.id), (Heads{{"refs/heads/main", Sha('a')}, {"refs/tags/v1", Sha('b')}}));

  // Replacing all: refs left out are gone.
  ASSERT_TRUE(
      hooks()
          .SetRefHeads(other_.id, {{"refs/heads/main", Sha('c')}, {"refs/heads/dev", Sha('d')}})
          .has_value());
  EXPECT_EQ(HeadsOf(other_.id),
            (Heads{{"refs/heads/main", Sha('c')}, {"refs/heads/dev", Sha('d')}}));
  EXPECT_TRUE(HeadsOf(repo_.id).empty()) << "per repo";

  // 64 hex digits (SHA-256 repositories) fit.
  const std::string sha256(64, 'f');
  ASSERT_TRUE(hooks().SetRefHeads(repo_.id, {{"refs/heads/main", sha256}}).has_value());
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{"refs/heads/main", sha256}}));
}

TEST_P(WebhookStoreTest, SwapRefHeadCreatesMovesAndDeletesOnlyFromTheExpectedValue) {
  const std::string ref = "refs/heads/main";
  std::string current = "untouched";
  // Create: expected "" (absent).
  EXPECT_TRUE(hooks().SwapRefHead(repo_.id, ref, "", Sha('a'), &current).value());
  EXPECT_EQ(current, "untouched") << "only set on a lost race";
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{ref, Sha('a')}}));
  // Move.
  EXPECT_TRUE(hooks().SwapRefHead(repo_.id, ref, Sha('a'), Sha('b'), &current).value());
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{ref, Sha('b')}}));

  // Lost races: another writer moved it first.
  EXPECT_FALSE(hooks().SwapRefHead(repo_.id, ref, Sha('a'), Sha('c'), &current).value());
  EXPECT_EQ(current, Sha('b'));
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{ref, Sha('b')}})) << "nothing changed";
  current.clear();
  EXPECT_FALSE(hooks().SwapRefHead(repo_.id, ref, "", Sha('c'), &current).value())
      << "creating a ref that exists";
  EXPECT_EQ(current, Sha('b'));
  EXPECT_FALSE(hooks().SwapRefHead(repo_.id, ref, Sha('a'), "", &current).value())
      << "deleting from the wrong value";
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{ref, Sha('b')}}));
  EXPECT_FALSE(hooks().SwapRefHead(repo_.id, ref, Sha('a'), Sha('c'), nullptr).value())
      << "current may be null";

  // The same ref of another repo is another row.
  EXPECT_TRUE(hooks().SwapRefHead(other_.id, ref, "", Sha('e'), nullptr).value());
  EXPECT_EQ(HeadsOf(repo_.id), (Heads{{ref, Sha('b')}}));

  // Delete: value "".
  EXPECT_TRUE(hooks().SwapRefHead(repo_.id, ref, Sha('b'), "", &current).value());
  EXPECT_TRUE(HeadsOf(repo_.id).empty());
  current = "x";
  EXPECT_FALSE(hooks().SwapRefHead(repo_.id, ref, Sha('b'), "", &current).value())
      << "deleted already";
  EXPECT_EQ(current, "") << "absent";
  EXPECT_TRUE(HeadsOf(repo_.id).empty());
  EXPECT_EQ(HeadsOf(other_.id), (Heads{{ref, Sha('e')}}));
}

TEST_P(WebhookStoreTest, ADeletedRepoTakesItsRefRecordWithIt) {
  ASSERT_TRUE(hooks().SetRefHeads(repo_.id, {{"refs/heads/main", Sha('a')}}).has_value());
  MarkUnknown(other_.id);
  ASSERT_TRUE(repos().Delete(repo_.Id()).has_value());
  ASSERT_TRUE(repos().Delete(other_.Id()).has_value());
  for (const char* table : {"ref_heads", "ref_heads_unknown"}) {
    auto c = stores_.pool->Read().value();
    auto s = c->Prepare(std::string("SELECT COUNT(*) FROM ") + table).value();
    ASSERT_TRUE(s.Step().value());
    EXPECT_EQ(s.Int(0), 0) << table;
  }
  // Writes for a repo that is gone leave nothing behind.
  ASSERT_TRUE(hooks().SetRefHeads(repo_.id, {{"refs/heads/main", Sha('b')}}).has_value());
  (void)hooks().SwapRefHead(repo_.id, "refs/heads/dev", "", Sha('c'), nullptr);
  auto c = stores_.pool->Read().value();
  auto s = c->Prepare("SELECT COUNT(*) FROM ref_heads").value();
  ASSERT_TRUE(s.Step().value());
  EXPECT_EQ(s.Int(0), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, WebhookStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

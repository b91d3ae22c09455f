#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class RepoStoreTest : public testing::StoreTest {};

RepoRecord Repo(std::string ns, std::string name, RepoType type = RepoType::Model,
                bool is_private = false, int64_t created = 0, int64_t modified = 0) {
  RepoRecord r;
  r.type = type;
  r.ns = std::move(ns);
  r.name = std::move(name);
  r.is_private = is_private;
  r.created_at = created;
  r.last_modified = modified;
  return r;
}

RepoId Id(std::string ns, std::string name, RepoType type = RepoType::Model) {
  return RepoId{type, std::move(ns), std::move(name)};
}

std::vector<std::string> Names(const std::vector<RepoRecord>& v) {
  std::vector<std::string> out;
  for (const auto& r : v) out.push_back(r.Id().Id());
  return out;
}

TEST_P(RepoStoreTest, CreateFindAndConflict) {
  auto bert = repos().Create(Repo("acme", "bert"));
  ASSERT_TRUE(bert.has_value()) << bert.error().message;
  EXPECT_GT(bert->id, 0);
  EXPECT_GT(bert->created_at, 0);
  EXPECT_EQ(bert->last_modified, bert->created_at);
  EXPECT_EQ(bert->default_branch, "main");

  auto dup = repos().Create(Repo("acme", "bert"));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, ErrorCode::Conflict);
  // Same name, other type: a different repo.
  EXPECT_TRUE(repos().Create(Repo("acme", "bert", RepoType::Dataset)).has_value());

  auto found = repos().Find(Id("acme", "bert"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, bert->id);
  EXPECT_EQ(found->type, RepoType::Model);
  EXPECT_EQ(repos().FindById(bert->id)->name, "bert");

  auto missing = repos().Find(Id("acme", "gpt"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
  EXPECT_NE(missing.error().message.find("acme/gpt"), std::string::npos);
  EXPECT_EQ(repos().FindById(99999).error().code, ErrorCode::RepoNotFound);
}

TEST_P(RepoStoreTest, UpdateHeadSetPrivateDelete) {
  auto r = repos().Create(Repo("acme", "bert", RepoType::Model, false, 100, 100)).value();
  ASSERT_TRUE(repos().UpdateHead(r.id, std::string(40, 'a'), 500).has_value());
  ASSERT_TRUE(repos().SetPrivate(r.id, true).has_value());
  auto got = repos().Find(Id("acme", "bert")).value();
  EXPECT_EQ(got.last_commit, std::string(40, 'a'));
  EXPECT_EQ(got.last_modified, 500);
  EXPECT_EQ(got.created_at, 100);
  EXPECT_TRUE(got.is_private);
  EXPECT_EQ(repos().UpdateHead(4242, "", 1).error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(repos().SetPrivate(4242, true).error().code, ErrorCode::RepoNotFound);

  ASSERT_TRUE(repos().Delete(Id("acme", "bert")).has_value());
  EXPECT_EQ(repos().Find(Id("acme", "bert")).error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(repos().Delete(Id("acme", "bert")).error().code, ErrorCode::RepoNotFound);
}

TEST_P(RepoStoreTest, MoveRenamesAndRefusesExistingTarget) {
  auto a = repos().Create(Repo("alice", "a")).value();
  repos().Create(Repo("alice", "b")).value();
  auto moved = repos().Move(Id("alice", "a"), Id("acme", "a2"));
  ASSERT_TRUE(moved.has_value()) << moved.error().message;
  EXPECT_EQ(moved->id, a.id);
  EXPECT_EQ(moved->ns, "acme");
  EXPECT_EQ(moved->name, "a2");
  EXPECT_EQ(repos().Find(Id("alice", "a")).error().code, ErrorCode::RepoNotFound);

  EXPECT_EQ(repos().Move(Id("acme", "a2"), Id("alice", "b")).error().code, ErrorCode::Conflict);
  EXPECT_TRUE(repos().Find(Id("acme", "a2")).has_value());  // unchanged by the failed move
  EXPECT_EQ(repos().Move(Id("nobody", "x"), Id("alice", "y")).error().code,
            ErrorCode::RepoNotFound);
  EXPECT_EQ(repos().Move(Id("acme", "a2"), Id("acme", "a3", RepoType::Dataset)).error().code,
            ErrorCode::BadRequest);
}

class RepoListTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    // 30 models: alice/m00..m09 (public), acme/m10..m19 (every other one private),
    // bob/m20..m29 (private ones too). created_at ascends with the index; last_modified
    // repeats in groups of 3 to exercise tie-breaking by id.
    for (int i = 0; i < 30; ++i) {
      std::string ns = i < 10 ? "alice" : i < 20 ? "acme" : "bob";
      char name[8];
      std::snprintf(name, sizeof name, "m%02d", i);
      bool priv = i >= 10 && i % 2 == 1;
      ASSERT_TRUE(repos()
                      .Create(Repo(ns, name, RepoType::Model, priv, 1000 + i, 5000 + i / 3))
                      .has_value());
    }
    ASSERT_TRUE(repos().Create(Repo("alice", "data-set_1", RepoType::Dataset)).has_value());
  }

  // Follows next_cursor to the end; returns every item in order.
  std::vector<RepoRecord> All(RepoQuery q, int* pages = nullptr) {
    std::vector<RepoRecord> out;
    int n = 0;
    for (;;) {
      auto page = repos().List(q);
      EXPECT_TRUE(page.has_value()) << page.error().message;
      if (!page) break;
      ++n;
      EXPECT_LE(static_cast<int>(page->items.size()), q.limit);
      out.insert(out.end(), page->items.begin(), page->items.end());
      if (page->next_cursor.empty()) break;
      q.cursor = page->next_cursor;
    }
    if (pages) *pages = n;
    return out;
  }
};

TEST_P(RepoListTest, PaginatesInSortOrderWithoutGapsOrRepeats) {
  RepoQuery q;
  q.type = RepoType::Model;
  q.include_all_private = true;
  q.limit = 4;
  for (RepoSort sort : {RepoSort::LastModified, RepoSort::CreatedAt, RepoSort::Id}) {
    for (bool desc : {true, false}) {
      q.sort = sort;
      q.descending = desc;
      int pages = 0;
      auto all = All(q, &pages);
      ASSERT_EQ(all.size(), 30u);
      EXPECT_EQ(pages, 8);
      std::set<int64_t> ids;
      for (const auto& r : all) ids.insert(r.id);
      EXPECT_EQ(ids.size(), 30u);
      for (size_t i = 1; i < all.size(); ++i) {
        auto key = [&](const RepoRecord& r) {
          int64_t v = sort == RepoSort::CreatedAt ? r.created_at
                      : sort == RepoSort::Id      ? r.id
                                                  : r.last_modified;
          return std::make_pair(v, r.id);
        };
        if (desc)
          EXPECT_GT(key(all[i - 1]), key(all[i]));
        else
          EXPECT_LT(key(all[i - 1]), key(all[i]));
      }
    }
  }
}

TEST_P(RepoListTest, LastPageHasNoCursor) {
  RepoQuery q;
  q.type = RepoType::Model;
  q.author = "alice";
  q.limit = 10;
  auto page = repos().List(q).value();
  EXPECT_EQ(page.items.size(), 10u);
  EXPECT_EQ(page.next_cursor, "");
}

TEST_P(RepoListTest, SearchIsCaseInsensitiveSubstringOfRepoId) {
  RepoQuery q;
  q.include_all_private = true;
  q.search = "ALICE/M0";
  EXPECT_EQ(All(q).size(), 10u);
  q.search = "ice/m05";
  EXPECT_EQ(Names(All(q)), std::vector<std::string>{"alice/m05"});
  // LIKE wildcards in the search text are literal.
  q.search = "_";
  EXPECT_EQ(Names(All(q)), std::vector<std::string>{"alice/data-set_1"});
  q.search = "%";
  EXPECT_TRUE(All(q).empty());
}

// The search index (migration 13) follows creates, renames and deletes, and both of
// SQLite's plans (from the index for a narrow search, along the sort order for a wide one)
// list exactly the repos whose id holds the text.
TEST_P(RepoListTest, SearchIndexFollowsChangesAndBothPlansAgree) {
  constexpr int kMany = 2100;  // more than the narrow plan's 2000
  for (int i = 0; i < kMany; ++i) {
    ASSERT_TRUE(repos().Create(Repo("org", "common-" + std::to_string(i))).has_value());
  }
  RepoQuery q;
  q.sort = RepoSort::Id;
  q.descending = false;
  q.limit = 500;
  q.search = "Common-";  // wide: every one of them
  EXPECT_EQ(All(q).size(), static_cast<size_t>(kMany));
  q.search = "mon-20";  // narrow: common-20, -200..209, -2000..2099
  std::vector<std::string> want;
  for (int i = 0; i < kMany; ++i) {
    std::string name = "org/common-" + std::to_string(i);
    if (name.find("mon-20") != std::string::npos) want.push_back(name);
  }
  std::sort(want.begin(), want.end());
  auto got = Names(All(q));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got.size(), 111u);
  EXPECT_EQ(got, want);

  ASSERT_TRUE(repos().Move(Id("alice", "m05"), Id("alice", "renamed-x")).has_value());
  q.search = "renamed";
  EXPECT_EQ(Names(All(q)), std::vector<std::string>{"alice/renamed-x"});
  q.search = "ice/m05";
  EXPECT_TRUE(All(q).empty());
  ASSERT_TRUE(repos().Delete(Id("alice", "renamed-x")).has_value());
  q.search = "renamed";
  EXPECT_TRUE(All(q).empty());
  // The index's query syntax is not the user's: quotes and operators are text.
  q.search = "m0\" OR m1";
  EXPECT_TRUE(All(q).empty());
  q.search = "é/m";  // not ASCII: the scan
  EXPECT_TRUE(All(q).empty());
}

TEST_P(RepoListTest, AuthorAndTypeFilter) {
  RepoQuery q;
  q.include_all_private = true;
  q.author = "acme";
  EXPECT_EQ(All(q).size(), 10u);
  q.author = "alice";
  EXPECT_EQ(All(q).size(), 11u);
  q.type = RepoType::Dataset;
  EXPECT_EQ(Names(All(q)), std::vector<std::string>{"alice/data-set_1"});
  q.author = "acm";  // exact match only
  EXPECT_TRUE(All(q).empty());
}

TEST_P(RepoListTest, PrivateReposOnlyForReadableNamespaces) {
  RepoQuery q;
  q.type = RepoType::Model;
  q.limit = 7;
  // Anonymous: 10 alice + 5 public acme + 5 public bob.
  EXPECT_EQ(All(q).size(), 20u);
  q.readable_namespaces = {"acme"};
  auto acme_member = All(q);
  EXPECT_EQ(acme_member.size(), 25u);
  for (const auto& r : acme_member) EXPECT_TRUE(!r.is_private || r.ns == "acme") << r.ns;
  q.readable_namespaces = {"acme", "bob"};
  EXPECT_EQ(All(q).size(), 30u);
  q.readable_namespaces.clear();
  q.include_all_private = true;
  EXPECT_EQ(All(q).size(), 30u);
}

TEST_P(RepoListTest, ForeignOrGarbageCursorIsBadRequest) {
  RepoQuery q;
  q.limit = 2;
  q.sort = RepoSort::CreatedAt;
  auto first = repos().List(q).value();
  ASSERT_FALSE(first.next_cursor.empty());
  q.sort = RepoSort::LastModified;  // cursor from another sort
  q.cursor = first.next_cursor;
  EXPECT_EQ(repos().List(q).error().code, ErrorCode::BadRequest);
  for (std::string bad : {"x", "md.abc.1", "md.1", "md.1.2.3", "md..5"}) {
    q.cursor = bad;
    EXPECT_EQ(repos().List(q).error().code, ErrorCode::BadRequest) << bad;
  }
}

TEST(RepoSortTest, UnknownKeysFallBackToLastModified) {
  EXPECT_EQ(ParseRepoSort("createdAt"), RepoSort::CreatedAt);
  EXPECT_EQ(ParseRepoSort("id"), RepoSort::Id);
  EXPECT_EQ(ParseRepoSort("lastModified"), RepoSort::LastModified);
  EXPECT_EQ(ParseRepoSort("downloads"), RepoSort::Downloads);
  EXPECT_EQ(ParseRepoSort("trendingScore"), RepoSort::Trending);
  EXPECT_EQ(ParseRepoSort("trending"), RepoSort::Trending);
  EXPECT_EQ(ParseRepoSort("likes"), RepoSort::Likes);
  EXPECT_EQ(ParseRepoSort("likes30d"), RepoSort::LastModified);
}

TEST_P(RepoStoreTest, CardMetaIsReplacedWholeAndReadBack) {
  auto r = repos().Create(Repo("acme", "bert")).value();
  ASSERT_TRUE(
      repos()
          .SetCardMeta(r.id, "transformers", "fill-mask", {"bert", "license:mit", "bert", "en"})
          .has_value());
  auto got = repos().Find(Id("acme", "bert")).value();
  EXPECT_EQ(got.library, "transformers");
  EXPECT_EQ(got.pipeline, "fill-mask");
  EXPECT_EQ(got.tags, (std::vector<std::string>{"bert", "license:mit", "en"}));
  ASSERT_TRUE(repos().SetCardMeta(r.id, "", "", {"z", "a"}).has_value());
  got = repos().FindById(r.id).value();
  EXPECT_EQ(got.library, "");
  EXPECT_EQ(got.tags, (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(repos().SetCardMeta(4242, "x", "", {}).error().code, ErrorCode::RepoNotFound);
}

TEST_P(RepoStoreTest, DownloadsAddUpPerDayAndAllTime) {
  auto r = repos().Create(Repo("acme", "bert")).value();
  ASSERT_TRUE(repos().AddDownloads(r.id, 100, 3).has_value());
  ASSERT_TRUE(repos().AddDownloads(r.id, 100, 2).has_value());
  ASSERT_TRUE(repos().AddDownloads(r.id, 90, 1).has_value());
  EXPECT_EQ(repos().Find(Id("acme", "bert"))->downloads, 6);
  EXPECT_TRUE(repos().AddDownloads(4242, 100, 1).has_value());  // gone: skipped
  // A download counts for trending at once; a refresh drops the days outside the window.
  EXPECT_EQ(repos().Find(Id("acme", "bert"))->trending, 6);
  EXPECT_EQ(repos().RefreshTrending(100).value(), 1);
  RepoQuery q;
  q.sort = RepoSort::Trending;
  auto page = repos().List(q).value();
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].trending, 5);  // day 90 is outside the 7-day window (94..100)
  EXPECT_EQ(page.items[0].downloads, 6);
  EXPECT_EQ(repos().RefreshTrending(100).value(), 0);  // nothing changed: nothing written
  EXPECT_EQ(repos().RefreshTrending(106).value(), 0);  // day 100 is still in 100..106
  EXPECT_EQ(repos().RefreshTrending(107).value(), 1);  // and now it is not
  EXPECT_EQ(repos().Find(Id("acme", "bert"))->trending, 0);
  EXPECT_EQ(repos().Find(Id("acme", "bert"))->downloads, 6);  // all time stays
}

TEST_P(RepoListTest, FiltersByTagsLibraryAndPipeline) {
  auto id = [&](const char* ns, const char* name) { return repos().Find(Id(ns, name))->id; };
  ASSERT_TRUE(repos()
                  .SetCardMeta(id("alice", "m00"), "transformers", "fill-mask",
                               {"transformers", "en", "license:mit"})
                  .has_value());
  ASSERT_TRUE(repos()
                  .SetCardMeta(id("alice", "m01"), "transformers", "text-generation",
                               {"transformers", "fr", "license:mit"})
                  .has_value());
  ASSERT_TRUE(
      repos()
          .SetCardMeta(id("acme", "m11"), "diffusers", "text-to-image", {"en", "license:mit"})
          .has_value());  // private
  RepoQuery q;
  q.limit = 1;
  q.tags = {"license:mit"};
  EXPECT_EQ(Names(All(q)), (std::vector<std::string>{"alice/m01", "alice/m00"}));
  q.tags = {"license:mit", "en"};
  EXPECT_EQ(Names(All(q)), std::vector<std::string>{"alice/m00"});
  q.include_all_private = true;
  EXPECT_EQ(Names(All(q)), (std::vector<std::string>{"acme/m11", "alice/m00"}));
  q.tags = {"license:mit", "en", "missing"};
  EXPECT_TRUE(All(q).empty());
  q.tags.clear();
  q.library = "transformers";
  EXPECT_EQ(All(q).size(), 2u);
  q.pipeline = "text-generation";
  auto one = All(q);
  ASSERT_EQ(Names(one), std::vector<std::string>{"alice/m01"});
  EXPECT_EQ(one[0].tags, (std::vector<std::string>{"transformers", "fr", "license:mit"}));
  EXPECT_EQ(one[0].library, "transformers");
  q.library = "Transformers";  // exact match
  EXPECT_TRUE(All(q).empty());
}

TEST_P(RepoListTest, DownloadsAndTrendingSortsPageThroughEverything) {
  // m00..m29 get i downloads on day 200, and m00..m09 also 100 each on day 150 (old).
  for (int i = 0; i < 30; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "m%02d", i);
    std::string ns = i < 10 ? "alice" : i < 20 ? "acme" : "bob";
    int64_t rid = repos().Find(Id(ns, name))->id;
    ASSERT_TRUE(repos().AddDownloads(rid, 200, i % 15).has_value());
    if (i < 10) {
      ASSERT_TRUE(repos().AddDownloads(rid, 150, 100).has_value());
    }
  }
  RepoQuery q;
  q.type = RepoType::Model;
  q.include_all_private = true;
  q.limit = 4;
  ASSERT_GT(repos().RefreshTrending(203).value(), 0);
  for (RepoSort sort : {RepoSort::Downloads, RepoSort::Trending}) {
    for (bool desc : {true, false}) {
      q.sort = sort;
      q.descending = desc;
      int pages = 0;
      auto all = All(q, &pages);
      ASSERT_EQ(all.size(), 30u);
      EXPECT_EQ(pages, 8);
      std::set<int64_t> ids;
      for (const auto& r : all) ids.insert(r.id);
      EXPECT_EQ(ids.size(), 30u);
      auto key = [&](const RepoRecord& r) {
        return std::make_pair(sort == RepoSort::Downloads ? r.downloads : r.trending, r.id);
      };
      for (size_t i = 1; i < all.size(); ++i) {
        if (desc)
          EXPECT_GT(key(all[i - 1]), key(all[i]));
        else
          EXPECT_LT(key(all[i - 1]), key(all[i]));
      }
    }
  }
  q.sort = RepoSort::Downloads;
  q.descending = true;
  q.limit = 1;
  EXPECT_EQ(repos().List(q)->items[0].downloads, 109);  // alice/m09: 9 + 100
  q.sort = RepoSort::Trending;
  auto top = repos().List(q)->items[0];
  EXPECT_EQ(top.trending, 14);  // the old day is outside the window
  EXPECT_EQ(top.name, "m29");   // 14 downloads like m14, but a higher id
  q.cursor = "nd.14.3";         // a downloads cursor
  EXPECT_EQ(repos().List(q).error().code, ErrorCode::BadRequest);
  q.cursor = "td.14";
  EXPECT_EQ(repos().List(q).error().code, ErrorCode::BadRequest);
}

INSTANTIATE_TEST_SUITE_P(Engines, RepoListTest, testing::kEngines, testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, RepoStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

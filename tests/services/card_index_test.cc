#include "services/repo/card_index.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "db/test_db.h"
#include "services/repo/model_card.h"

namespace hangar::services {
namespace {

namespace json = boost::json;
using Tags = std::vector<std::string>;

json::object Card(std::string_view yaml) {
  auto parsed = ParseCardData("---\n" + std::string(yaml) + "---\n# card\n");
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message;
  return parsed && *parsed ? **parsed : json::object{};
}

TEST(CardMeta, ModelCardTagsAsTheHubDerivesThem) {
  CardMeta meta =
      ExtractCardMeta(Card("library_name: transformers\n"
                           "pipeline_tag: fill-mask\n"
                           "tags: [bert, exbert]\n"
                           "language: [en, fr]\n"
                           "datasets:\n  - bookcorpus\n  - wikipedia\n"
                           "base_model: google/bert-base\n"
                           "license: apache-2.0\n"));
  EXPECT_EQ(meta.library, "transformers");
  EXPECT_EQ(meta.pipeline, "fill-mask");
  EXPECT_EQ(meta.tags,
            (Tags{"transformers", "bert", "exbert", "fill-mask", "en", "fr", "dataset:bookcorpus",
                  "dataset:wikipedia", "base_model:google/bert-base", "license:apache-2.0"}));
}

TEST(CardMeta, DatasetCardTagsArePrefixed) {
  CardMeta meta = ExtractCardMeta(Card("language: en\n"
                                       "task_categories: [text-classification]\n"
                                       "size_categories: 1K<n<10K\n"
                                       "license: mit\n"
                                       "tags: [reviews]\n"),
                                  RepoType::Dataset);
  EXPECT_EQ(meta.tags, (Tags{"reviews", "task_categories:text-classification", "language:en",
                             "size_categories:1K<n<10K", "license:mit"}));
}

TEST(CardMeta, StringsOrListsNumbersAsTextOtherShapesIgnored) {
  json::object card{{"tags", json::array{"a", 2024, true, json::object{{"x", 1}}, nullptr}},
                    {"library_name", json::array{"peft", "transformers"}},
                    {"pipeline_tag", json::object{{"nested", "no"}}},
                    {"license", 3}};
  CardMeta meta = ExtractCardMeta(card);
  EXPECT_EQ(meta.library, "peft");
  EXPECT_EQ(meta.pipeline, "");
  EXPECT_EQ(meta.tags, (Tags{"peft", "a", "2024", "license:3"}));
  EXPECT_TRUE(ExtractCardMeta(json::object{}).tags.empty());
}

TEST(CardMeta, BoundedCleanedAndDeduplicated) {
  json::array many;
  for (int i = 0; i < 500; ++i) many.push_back(json::string("t" + std::to_string(i % 300)));
  many.insert(many.begin(), json::string(std::string(kMaxCardTagBytes + 1, 'x')));
  many.insert(many.begin(), json::string("  bad\x01\nname\x7f  "));
  many.insert(many.begin(), json::string("\t\n"));
  CardMeta meta = ExtractCardMeta(json::object{{"tags", many},
                                               {"library_name",
                                                "li\x02"
                                                "b"},
                                               {"license", std::string(300, 'l')}});
  ASSERT_EQ(meta.tags.size(), kMaxCardTags);
  EXPECT_EQ(meta.library, "lib");
  EXPECT_EQ(meta.tags[0], "lib");
  EXPECT_EQ(meta.tags[1], "badname");
  EXPECT_EQ(meta.tags[2], "t0");
  for (const auto& t : meta.tags) {
    EXPECT_LE(t.size(), kMaxCardTagBytes);
    for (char c : t) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << t;
  }
  // A prefixed tag that goes over the bound is skipped, not cut.
  CardMeta long_license =
      ExtractCardMeta(json::object{{"license", std::string(kMaxCardTagBytes - 2, 'l')}});
  EXPECT_TRUE(long_license.tags.empty());
}

class DownloadCounterTest : public db::testing::DbTest {};

TEST_F(DownloadCounterTest, CountsInMemoryUntilFlushed) {
  auto bert = repos().Create(db::RepoRecord{.ns = "acme", .name = "bert"}).value();
  auto gpt = repos().Create(db::RepoRecord{.ns = "acme", .name = "gpt"}).value();
  int64_t now = 100 * 86400 + 5;
  int flushes = 0;  // after_flush runs only after a flush that wrote counts
  DownloadCounter counter(repos(), {.flush_interval = std::chrono::milliseconds(0),
                                    .clock = [&] { return now; },
                                    .after_flush = [&] { ++flushes; }});
  for (int i = 0; i < 5; ++i) counter.Count(bert.id);
  counter.Count(gpt.id);
  now += 86400;  // the next day
  counter.Count(bert.id);
  EXPECT_EQ(counter.Pending(), 7);
  EXPECT_EQ(repos().FindById(bert.id)->downloads, 0);  // nothing written yet

  EXPECT_EQ(flushes, 0);
  ASSERT_TRUE(counter.Flush().has_value());
  EXPECT_EQ(flushes, 1);
  EXPECT_EQ(counter.Pending(), 0);
  EXPECT_EQ(repos().FindById(bert.id)->downloads, 6);
  EXPECT_EQ(repos().FindById(gpt.id)->downloads, 1);
  db::RepoQuery q;
  q.sort = db::RepoSort::Trending;
  auto page = repos().List(q).value();
  ASSERT_EQ(page.items.size(), 2u);
  EXPECT_EQ(page.items[0].name, "bert");
  EXPECT_EQ(page.items[0].trending, 6);
  ASSERT_TRUE(counter.Flush().has_value());  // nothing pending: no change
  EXPECT_EQ(repos().FindById(bert.id)->downloads, 6);
  EXPECT_EQ(flushes, 1);
}

TEST_F(DownloadCounterTest, DestructionFlushesAndCountsAreThreadSafe) {
  auto bert = repos().Create(db::RepoRecord{.ns = "acme", .name = "bert"}).value();
  {
    DownloadCounter counter(repos(), {.flush_interval = std::chrono::milliseconds(5)});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) counter.Count(bert.id);
      });
    }
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(repos().FindById(bert.id)->downloads, 4000);
}

}  // namespace
}  // namespace hangar::services

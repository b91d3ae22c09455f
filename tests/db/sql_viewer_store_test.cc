// SqlViewerStore (db/viewer_store.h): the export row, its splits and their Parquet files;
// the superseded rule (a write naming an older source commit is dropped), the orders of the
// listings, and the rows going with the repo row.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "db/sql/sql_viewer_store.h"
#include "db/test_db.h"

namespace hangar::db {
namespace {

const std::string kCommitA(40, 'a');
const std::string kCommitB(40, 'b');

class ViewerStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    repo_ = MakeRepo("squad");
    // A second store on the same pool, so the store's clock is the test's.
    store_ = std::make_unique<SqlViewerStore>(stores_.pool, [this] { return now_.load(); });
  }
  void TearDown() override {
    store_.reset();
    StoreTest::TearDown();
  }
  ViewerStore& viewer() { return *store_; }

  int64_t MakeRepo(const std::string& name) {
    RepoRecord in;
    in.type = RepoType::Dataset;
    in.ns = "acme";
    in.name = name;
    return repos().Create(in).value().id;
  }

  // Rows of `table` left for any repo, read past the store's own queries.
  int64_t CountRows(const std::string& table) {
    auto c = stores_.pool->Read().value();
    auto s = c->Prepare("SELECT COUNT(*) FROM " + table).value();
    EXPECT_TRUE(s.Step().value());
    return s.Int(0);
  }

  static ViewerSplit Split(std::string config, std::string split, int ordinal) {
    ViewerSplit v;
    v.config = std::move(config);
    v.split = std::move(split);
    v.ordinal = ordinal;
    return v;
  }

  static ViewerFile File(int shard, int64_t row_offset, std::vector<int64_t> row_groups) {
    ViewerFile f;
    f.shard = shard;
    f.path = "default/train/" + std::to_string(shard) + ".parquet";
    f.sha256 = Sha256::Of(f.path);
    f.size = 1000 + shard;
    f.row_offset = row_offset;
    for (int64_t n : row_groups) f.num_rows += n;
    f.row_group_rows = std::move(row_groups);
    return f;
  }

  // Begins kCommitA with default/train and default/test, and gives train two files.
  void BeginWithFiles() {
    ASSERT_TRUE(viewer()
                    .BeginExport(repo_, kCommitA, true,
                                 {Split("default", "train", 0), Split("default", "test", 1)})
                    .has_value());
    auto train = Split("default", "train", 0);
    train.status = ExportStatus::Ready;
    ASSERT_TRUE(viewer()
                    .PutSplit(repo_, kCommitA, train,
                              std::vector<ViewerFile>{File(0, 0, {10, 10}), File(1, 20, {5})})
                    .value());
  }

  int64_t repo_ = 0;
  std::atomic<int64_t> now_{1000};
  std::unique_ptr<SqlViewerStore> store_;
};

TEST_P(ViewerStoreTest, GetExportIsNulloptBeforeAnyAndRoundtripsAfterBegin) {
  EXPECT_FALSE(viewer().GetExport(repo_).value().has_value());
  EXPECT_TRUE(viewer().ListSplits(repo_).value().empty());
  ASSERT_TRUE(viewer().BeginExport(repo_, kCommitA, false, {}).has_value());
  auto e = viewer().GetExport(repo_).value();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->repo_id, repo_);
  EXPECT_EQ(e->source_commit, kCommitA);
  EXPECT_EQ(e->status, ExportStatus::Pending);
  EXPECT_EQ(e->export_commit, "");
  EXPECT_FALSE(e->viewer);
  EXPECT_EQ(e->error_code, "");
  EXPECT_EQ(e->updated_at, 1000);
  EXPECT_EQ(e->language, "");
  // The README's language, kept with the export and replaced by the next one.
  ASSERT_TRUE(viewer().BeginExport(repo_, kCommitB, true, {}, "fr").has_value());
  EXPECT_EQ(viewer().GetExport(repo_).value()->language, "fr");
  ASSERT_TRUE(viewer().BeginExport(repo_, kCommitA, true, {}).has_value());
  EXPECT_EQ(viewer().GetExport(repo_).value()->language, "");
}

TEST_P(ViewerStoreTest, BeginExportRefusesAMissingRepo) {
  auto r = viewer().BeginExport(repo_ + 100, kCommitA, true, {Split("default", "train", 0)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::RepoNotFound);
  EXPECT_FALSE(viewer().GetExport(repo_ + 100).value().has_value());
  EXPECT_EQ(CountRows("viewer_splits"), 0);
}

TEST_P(ViewerStoreTest, BeginExportReplacesThePreviousSplitsAndFiles) {
  BeginWithFiles();
  ASSERT_TRUE(viewer()
                  .SetExportStatus(repo_, kCommitA, ExportStatus::Failed, kCommitA, "E", "boom")
                  .value());
  now_ = 2000;
  ASSERT_TRUE(
      viewer().BeginExport(repo_, kCommitB, true, {Split("plain_text", "train", 0)}).has_value());
  auto e = viewer().GetExport(repo_).value().value();
  EXPECT_EQ(e.source_commit, kCommitB);
  EXPECT_EQ(e.status, ExportStatus::Pending);
  EXPECT_EQ(e.export_commit, "");  // the previous export's figures are reset too
  EXPECT_EQ(e.error_code, "");
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.updated_at, 2000);
  auto splits = viewer().ListSplits(repo_).value();
  ASSERT_EQ(splits.size(), 1u);
  EXPECT_EQ(splits[0].config, "plain_text");
  EXPECT_EQ(splits[0].status, ExportStatus::Pending);
  EXPECT_TRUE(viewer().ListFiles(repo_, "default", "train").value().empty());
  EXPECT_EQ(CountRows("viewer_files"), 0);
}

TEST_P(ViewerStoreTest, SetExportStatusWritesWhileCurrentAndNothingWhenSuperseded) {
  ASSERT_TRUE(viewer().BeginExport(repo_, kCommitA, true, {}).has_value());
  now_ = 1500;
  std::string export_commit(40, 'e');
  EXPECT_TRUE(viewer()
                  .SetExportStatus(repo_, kCommitA, ExportStatus::Ready, export_commit, "", "")
                  .value());
  auto e = viewer().GetExport(repo_).value().value();
  EXPECT_EQ(e.status, ExportStatus::Ready);
  EXPECT_EQ(e.export_commit, export_commit);
  EXPECT_EQ(e.updated_at, 1500);

  now_ = 1600;
  EXPECT_FALSE(viewer()
                   .SetExportStatus(repo_, kCommitB, ExportStatus::Failed, "", "ConfigNamesError",
                                    "stale job")
                   .value());
  auto after = viewer().GetExport(repo_).value().value();
  EXPECT_EQ(after.status, ExportStatus::Ready);
  EXPECT_EQ(after.export_commit, export_commit);
  EXPECT_EQ(after.error_code, "");
  EXPECT_EQ(after.updated_at, 1500);
  // No export row at all: nothing to supersede, nothing written.
  int64_t other = MakeRepo("other");
  EXPECT_FALSE(
      viewer().SetExportStatus(other, kCommitA, ExportStatus::Running, "", "", "").value());
  EXPECT_FALSE(viewer().GetExport(other).value().has_value());
}

TEST_P(ViewerStoreTest, PutSplitWhenSupersededWritesNothing) {
  BeginWithFiles();
  auto stale = Split("default", "train", 0);
  stale.status = ExportStatus::Failed;
  stale.error = "stale";
  now_ = 5000;
  EXPECT_FALSE(
      viewer().PutSplit(repo_, kCommitB, stale, std::vector<ViewerFile>{File(0, 0, {1})}).value());
  auto splits = viewer().ListSplits(repo_).value();
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].status, ExportStatus::Ready);
  EXPECT_EQ(splits[0].error, "");
  EXPECT_EQ(viewer().ListFiles(repo_, "default", "train").value().size(), 2u);
  EXPECT_EQ(viewer().GetExport(repo_).value()->updated_at, 1000);
}

TEST_P(ViewerStoreTest, PutSplitOfAnUnknownSplitIsNotFoundAndWritesNothing) {
  BeginWithFiles();
  now_ = 5000;
  auto r = viewer().PutSplit(repo_, kCommitA, Split("default", "validation", 2),
                             std::vector<ViewerFile>{File(0, 0, {1})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_EQ(viewer().ListSplits(repo_).value().size(), 2u);
  EXPECT_TRUE(viewer().ListFiles(repo_, "default", "validation").value().empty());
  EXPECT_EQ(viewer().GetExport(repo_).value()->updated_at, 1000);  // rolled back
}

TEST_P(ViewerStoreTest, PutSplitReplacesFilesWhenGivenAndKeepsThemOtherwise) {
  BeginWithFiles();
  auto train = Split("default", "train", 0);
  train.status = ExportStatus::Running;
  train.num_rows = 25;
  ASSERT_TRUE(viewer().PutSplit(repo_, kCommitA, train, std::nullopt).value());
  auto kept = viewer().ListFiles(repo_, "default", "train").value();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].row_offset, 20);
  EXPECT_EQ(viewer().ListSplits(repo_).value()[0].num_rows, 25);

  ASSERT_TRUE(
      viewer().PutSplit(repo_, kCommitA, train, std::vector<ViewerFile>{File(0, 0, {7})}).value());
  auto replaced = viewer().ListFiles(repo_, "default", "train").value();
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(replaced[0].num_rows, 7);
  // An empty list is a replacement too: the split has no files then.
  ASSERT_TRUE(viewer().PutSplit(repo_, kCommitA, train, std::vector<ViewerFile>{}).value());
  EXPECT_TRUE(viewer().ListFiles(repo_, "default", "train").value().empty());
}

TEST_P(ViewerStoreTest, SplitFieldsRoundtripWithAndWithoutEstimatedRows) {
  ViewerSplit full = Split("default", "train", 0);
  full.status = ExportStatus::Ready;
  full.error_code = "TooBigContentError";
  full.error = "too big";
  full.builder = "csv";
  full.partial = true;
  full.num_rows = 123456789012;
  full.estimated_num_rows = 987654321098;
  full.num_columns = 7;
  full.num_bytes_original = 1LL << 40;
  full.num_bytes_parquet = 5'000'000'000;
  full.num_bytes_memory = 42;
  full.columns_json = R"([{"name":"text","type":"VARCHAR"}])";
  ViewerSplit bare = Split("default", "test", 1);
  bare.estimated_num_rows = 0;  // a value of 0 is not null
  ASSERT_TRUE(viewer().BeginExport(repo_, kCommitA, true, {full, bare}).has_value());
  auto got = viewer().ListSplits(repo_).value();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status, ExportStatus::Ready);
  EXPECT_EQ(got[0].error_code, full.error_code);
  EXPECT_EQ(got[0].error, full.error);
  EXPECT_EQ(got[0].builder, "csv");
  EXPECT_TRUE(got[0].partial);
  EXPECT_EQ(got[0].num_rows, full.num_rows);
  EXPECT_EQ(got[0].estimated_num_rows, full.estimated_num_rows);
  EXPECT_EQ(got[0].num_columns, 7);
  EXPECT_EQ(got[0].num_bytes_original, full.num_bytes_original);
  EXPECT_EQ(got[0].num_bytes_parquet, full.num_bytes_parquet);
  EXPECT_EQ(got[0].num_bytes_memory, 42);
  EXPECT_EQ(got[0].columns_json, full.columns_json);
  EXPECT_EQ(got[1].estimated_num_rows, std::optional<int64_t>(0));

  // PutSplit writes every field, the null included.
  full.estimated_num_rows.reset();
  full.partial = false;
  ASSERT_TRUE(viewer().PutSplit(repo_, kCommitA, full, std::nullopt).value());
  got = viewer().ListSplits(repo_).value();
  EXPECT_FALSE(got[0].estimated_num_rows.has_value());
  EXPECT_FALSE(got[0].partial);
}

TEST_P(ViewerStoreTest, FileFieldsAndRowGroupsRoundtripEmptyIncluded) {
  ASSERT_TRUE(
      viewer().BeginExport(repo_, kCommitA, true, {Split("default", "train", 0)}).has_value());
  std::vector<ViewerFile> files = {File(0, 0, {}), File(1, 0, {1}),
                                   File(2, 1, {100000, 0, 3000000000LL, 17})};
  ASSERT_TRUE(viewer().PutSplit(repo_, kCommitA, Split("default", "train", 0), files).value());
  auto got = viewer().ListFiles(repo_, "default", "train").value();
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shard, files[i].shard);
    EXPECT_EQ(got[i].path, files[i].path);
    EXPECT_EQ(got[i].sha256.Hex(), files[i].sha256.Hex());
    EXPECT_EQ(got[i].size, files[i].size);
    EXPECT_EQ(got[i].row_offset, files[i].row_offset);
    EXPECT_EQ(got[i].num_rows, files[i].num_rows);
    EXPECT_EQ(got[i].row_group_rows, files[i].row_group_rows);
  }
  EXPECT_TRUE(got[0].row_group_rows.empty());
}

TEST_P(ViewerStoreTest, ListingsFollowOrdinalAndShardOrder) {
  ASSERT_TRUE(viewer()
                  .BeginExport(repo_, kCommitA, true,
                               {Split("b", "train", 2), Split("a", "test", 0),
                                Split("b", "test", 3), Split("a", "train", 1)})
                  .has_value());
  std::vector<std::string> order;
  // Results held in locals: a range-for over a temporary Result's value() would dangle.
  auto splits = viewer().ListSplits(repo_).value();
  for (const auto& s : splits) order.push_back(s.config + "/" + s.split);
  EXPECT_EQ(order, (std::vector<std::string>{"a/test", "a/train", "b/train", "b/test"}));

  std::vector<ViewerFile> files;
  for (int shard : {3, 0, 11, 2, 1}) files.push_back(File(shard, shard * 10, {10}));
  ASSERT_TRUE(viewer().PutSplit(repo_, kCommitA, Split("b", "train", 2), files).value());
  std::vector<int> shards;
  auto listed = viewer().ListFiles(repo_, "b", "train").value();
  for (const auto& f : listed) shards.push_back(f.shard);
  EXPECT_EQ(shards, (std::vector<int>{0, 1, 2, 3, 11}));
  // Files belong to one split only.
  EXPECT_TRUE(viewer().ListFiles(repo_, "a", "train").value().empty());
}

TEST_P(ViewerStoreTest, ListUnfinishedListsPendingAndRunningOnly) {
  int64_t pending = repo_, running = MakeRepo("r"), ready = MakeRepo("ok"),
          failed = MakeRepo("bad");
  MakeRepo("never");
  for (int64_t id : {pending, running, ready, failed})
    ASSERT_TRUE(viewer().BeginExport(id, kCommitA, true, {}).has_value());
  ASSERT_TRUE(
      viewer().SetExportStatus(running, kCommitA, ExportStatus::Running, "", "", "").value());
  ASSERT_TRUE(viewer().SetExportStatus(ready, kCommitA, ExportStatus::Ready, "", "", "").value());
  ASSERT_TRUE(
      viewer().SetExportStatus(failed, kCommitA, ExportStatus::Failed, "", "E", "e").value());
  EXPECT_EQ(viewer().ListUnfinished().value(), (std::vector<int64_t>{pending, running}));
}

TEST_P(ViewerStoreTest, DeleteForgetsTheExportAndItsRows) {
  BeginWithFiles();
  int64_t other = MakeRepo("other");
  ASSERT_TRUE(viewer().BeginExport(other, kCommitB, true, {Split("x", "y", 0)}).has_value());
  ASSERT_TRUE(viewer().Delete(repo_).has_value());
  EXPECT_FALSE(viewer().GetExport(repo_).value().has_value());
  EXPECT_TRUE(viewer().ListSplits(repo_).value().empty());
  EXPECT_TRUE(viewer().ListFiles(repo_, "default", "train").value().empty());
  EXPECT_EQ(CountRows("viewer_files"), 0);
  EXPECT_EQ(viewer().ListSplits(other).value().size(), 1u);  // other repos untouched
  ASSERT_TRUE(viewer().Delete(repo_).has_value());           // twice is fine
  // A later write of the deleted export's job is dropped like a superseded one.
  EXPECT_FALSE(
      viewer().PutSplit(repo_, kCommitA, Split("default", "train", 0), std::nullopt).value());
}

TEST_P(ViewerStoreTest, RowsGoWithTheRepoRow) {
  BeginWithFiles();
  RepoRecord r = repos().FindById(repo_).value();
  ASSERT_TRUE(repos().Delete(r.Id()).has_value());
  EXPECT_FALSE(viewer().GetExport(repo_).value().has_value());
  EXPECT_EQ(CountRows("viewer_exports"), 0);
  EXPECT_EQ(CountRows("viewer_splits"), 0);
  EXPECT_EQ(CountRows("viewer_files"), 0);
}

TEST_P(ViewerStoreTest, ConcurrentWritersAcrossTwoOpenersDoNotFail) {
  // Two threads on the Stores' viewer store, two on the fixture's (another pool, as another
  // process would be): each drives its own repo and races the others on a shared one.
  constexpr int kThreads = 4, kRounds = 25;
  std::vector<int64_t> own;
  for (int t = 0; t < kThreads; ++t) own.push_back(MakeRepo("own" + std::to_string(t)));
  std::atomic<int> failures{0}, dropped{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ViewerStore& store = t % 2 == 0 ? *stores_.viewer : viewer();
      for (int i = 0; i < kRounds; ++i) {
        std::string commit = std::to_string(t * 1000 + i);
        for (int64_t id : {own[t], repo_}) {
          if (!store.BeginExport(id, commit, true, {Split("default", "train", 0)})) ++failures;
          auto put = store.PutSplit(id, commit, Split("default", "train", 0),
                                    std::vector<ViewerFile>{File(0, 0, {i})});
          auto set = store.SetExportStatus(id, commit, ExportStatus::Ready, commit, "", "");
          if (!put || !set || !store.ListSplits(id) || !store.ListUnfinished()) ++failures;
          if (put && set && (!*put || !*set)) ++dropped;  // another thread's BeginExport won
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    auto e = viewer().GetExport(own[t]).value().value();
    EXPECT_EQ(e.source_commit, std::to_string(t * 1000 + kRounds - 1));
    EXPECT_EQ(e.status, ExportStatus::Ready);
  }
  // The last BeginExport on the shared repo was followed by its own job's writes, which
  // nothing superseded; every earlier job's writes were either in time or dropped.
  auto shared = viewer().GetExport(repo_).value().value();
  EXPECT_EQ(shared.status, ExportStatus::Ready);
  EXPECT_EQ(shared.export_commit, shared.source_commit);
  EXPECT_EQ(viewer().ListFiles(repo_, "default", "train").value().size(), 1u);
  EXPECT_LE(dropped.load(), kThreads * kRounds);
}

TEST(ExportStatusNames, RoundtripAndRefuseOtherWords) {
  for (auto s :
       {ExportStatus::Pending, ExportStatus::Running, ExportStatus::Ready, ExportStatus::Failed}) {
    EXPECT_EQ(ParseExportStatus(ExportStatusName(s)), std::optional<ExportStatus>(s));
  }
  EXPECT_EQ(ExportStatusName(ExportStatus::Running), "running");
  EXPECT_FALSE(ParseExportStatus("Ready").has_value());
  EXPECT_FALSE(ParseExportStatus("").has_value());
}

INSTANTIATE_TEST_SUITE_P(Engines, ViewerStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db

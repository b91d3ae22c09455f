// CSV → Parquet with COPY, as the conversion job will run it: row groups of a chosen size
// under the allowed directory, and their counts read back from parquet_metadata.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "duckdb/engine.h"
#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using testing::TestDir;
using testing::TestOptions;

class DuckDbParquet : public ::testing::Test {
 protected:
  void SetUp() override {
    csv_ = dir_.File("in.csv");
    std::ofstream out(csv_);
    out << "id,name,score\n";
    for (int i = 0; i < kRows; ++i) out << i << ",name " << i << "," << i * 0.5 << "\n";
    out.close();
    EngineOptions o = TestOptions(dir_.path().string());
    o.allow_writes = true;
    engine_ = Engine::Open(o).value();
  }

  static constexpr int kRows = 100'000;
  TestDir dir_;
  std::string csv_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(DuckDbParquet, CopyWritesRowGroupsOfTheGivenSize) {
  std::string parquet = dir_.File("out/0000.parquet");
  std::filesystem::create_directories(dir_.path() / "out");
  auto copy = engine_->Run(
      Query("COPY (SELECT * FROM read_csv($1)) TO $2 (FORMAT parquet, ROW_GROUP_SIZE $3, "
            "COMPRESSION zstd)",
            {csv_, parquet, 10'240}));
  ASSERT_TRUE(copy.has_value()) << copy.error().message;
  EXPECT_EQ(testing::Int(*copy), kRows);  // COPY answers the rows it wrote

  auto groups =
      engine_->Run(Query("SELECT row_group_id, row_group_num_rows FROM parquet_metadata(?) "
                         "WHERE column_id = 0 ORDER BY row_group_id",
                         {parquet}));
  ASSERT_TRUE(groups.has_value()) << groups.error().message;
  ASSERT_EQ(groups->rows.size(), 10u);  // ceil(100000 / 10240)
  int64_t total = 0;
  for (size_t g = 0; g < groups->rows.size(); ++g) {
    int64_t n = testing::Int(*groups, g, 1);
    if (g + 1 < groups->rows.size()) {
      EXPECT_EQ(n, 10'240) << "row group " << g;
    }
    total += n;
  }
  EXPECT_EQ(total, kRows);

  auto file = engine_->Run(
      Query("SELECT num_rows, num_row_groups FROM parquet_file_metadata(?)", {parquet}));
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_EQ(testing::Int(*file, 0, 0), kRows);
  EXPECT_EQ(testing::Int(*file, 0, 1), 10);

  // Rows read back by their position in the file, the way /rows will seek.
  auto rows =
      engine_->Run(Query("SELECT id, name, score FROM read_parquet(?, file_row_number = true) "
                         "WHERE file_row_number BETWEEN ? AND ? ORDER BY file_row_number",
                         {parquet, 54'321, 54'322}));
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  ASSERT_EQ(rows->rows.size(), 2u);
  EXPECT_EQ(testing::Int(*rows, 0, 0), 54'321);
  EXPECT_EQ(testing::Text(*rows, 1, 1), "name 54322");
  EXPECT_EQ(rows->rows[1][2], Value(54'322 * 0.5));
  EXPECT_EQ(rows->columns[2].sql_type, "DOUBLE");
}

// DuckDB numbers COPY's `TO ?` before the `?`s of its query: `?` binds the target path to
// read_csv here. Numbered placeholders say which is which.
TEST_F(DuckDbParquet, CopyNumbersItsTargetFirst) {
  std::string parquet = dir_.File("swapped.parquet");
  auto r = engine_->Run(
      Query("COPY (SELECT * FROM read_csv(?)) TO ? (FORMAT parquet)", {parquet, csv_}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(std::filesystem::exists(parquet));
}

// With its delimiter given, a ragged CSV fails. (Sniffing the delimiter instead reads this
// file as one column of whole lines, without an error.)
TEST_F(DuckDbParquet, AMalformedCsvFailsWithDuckDbsReason) {
  std::string ragged = dir_.Write("ragged.csv", "a,b\n1,2\n3,4,5,6\n7,8\n");
  auto r =
      engine_->Run(Query("COPY (SELECT * FROM read_csv($1, delim = ',', header = true)) TO $2 "
                         "(FORMAT parquet)",
                         {ragged, dir_.File("ragged.parquet")}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("CSV"));
}

TEST_F(DuckDbParquet, AFileCutShortFailsCleanly) {
  std::string parquet = dir_.File("whole.parquet");
  ASSERT_TRUE(
      engine_->Run(Query("COPY (SELECT * FROM range(1000)) TO ? (FORMAT parquet)", {parquet}))
          .has_value());
  auto size = std::filesystem::file_size(parquet);
  std::filesystem::resize_file(parquet, size / 2);
  auto r = engine_->Run(Query("SELECT count(*) FROM read_parquet(?)", {parquet}));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().code, ErrorCode::Forbidden);
  EXPECT_TRUE(engine_->Run(Query("SELECT 1")).has_value());
}

}  // namespace
}  // namespace hangar::duckdb

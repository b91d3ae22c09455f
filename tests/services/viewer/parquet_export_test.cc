// services/viewer/parquet_export.h: one split's sources to Parquet shards with DuckDB —
// each reader, shards and row groups of the configured sizes, native Parquet indexed as it
// is, partial exports past the caps, and bad data refused with a clear error.

#include "services/viewer/parquet_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../../duckdb/test_dir.h"

namespace hangar::services::viewer {
namespace {

using duckdb::Engine;
using duckdb::Query;
using duckdb::testing::Int;
using duckdb::testing::TestDir;
using duckdb::testing::Text;

class ParquetExport : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = duckdb::testing::TestOptions(dir_.path().string());
    o.allow_writes = true;
    engine_ = Engine::Open(o).value();
    limits_.row_group_rows = 2048;
    limits_.row_groups_per_file = 2;
    limits_.max_parquet_bytes = 1ull << 30;
    limits_.max_source_bytes = 1ull << 30;
    limits_.native_max_row_group_rows = 4096;
    limits_.native_max_row_groups = 4;
    limits_.timeout = std::chrono::seconds(30);
  }

  SourceFile Source(std::string_view name, std::string_view text) {
    std::string path = dir_.Write("src/" + std::string(name), text);
    return {path, text.size()};
  }
  std::string OutDir() {
    std::string d = dir_.File("out" + std::to_string(++outs_));
    std::filesystem::create_directories(d);
    return d;
  }
  Result<SplitExport> Export(Builder b, std::vector<SourceFile> sources,
                             boost::json::object params = {}) {
    ConfigLayout c;
    c.name = "default";
    c.builder = b;
    c.params = std::move(params);
    return ExportSplit(*engine_, c, sources, OutDir(), limits_);
  }
  // Every row of the export, in order, as "a|b|…" (NULL as ∅).
  std::vector<std::string> Rows(const SplitExport& e) {
    std::vector<std::string> out;
    for (const auto& s : e.shards) {
      auto r = engine_->Run(Query("SELECT * FROM read_parquet($1)", {s.local_path})).value();
      for (const auto& row : r.rows) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
          if (c) line += "|";
          if (std::holds_alternative<std::monostate>(row[c]))
            line += "∅";
          else if (auto* i = std::get_if<int64_t>(&row[c]))
            line += std::to_string(*i);
          else if (auto* t = std::get_if<std::string>(&row[c]))
            line += *t;
          else if (auto* d = std::get_if<double>(&row[c]))
            line += std::to_string(*d);
          else if (auto* b = std::get_if<bool>(&row[c]))
            line += *b ? "true" : "false";
        }
        out.push_back(line);
      }
    }
    return out;
  }

  TestDir dir_;
  int outs_ = 0;
  std::unique_ptr<Engine> engine_;
  ExportLimits limits_;
};

TEST_F(ParquetExport, CsvWithCrlfEmptyCellsAndRaggedRows) {
  auto r = Export(Builder::Csv, {Source("a.csv", "id,name\r\n1,ann\r\n2,\r\n3,cé,extra\r\n4\r\n")});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const SplitExport& e = *r;
  EXPECT_EQ(e.num_rows, 4);
  EXPECT_FALSE(e.partial);
  ASSERT_GE(e.columns.size(), 2u);
  EXPECT_EQ(e.columns[0].name, "id");
  EXPECT_EQ(e.columns[0].sql_type, "BIGINT");
  auto rows = Rows(e);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[0].starts_with("1|ann"));
  EXPECT_TRUE(rows[1].starts_with("2|∅"));
  EXPECT_TRUE(rows[2].starts_with("3|cé"));
  EXPECT_TRUE(rows[3].starts_with("4|∅"));
}

TEST_F(ParquetExport, ShardsAndRowGroupsHaveTheConfiguredSizes) {
  std::string csv = "n\n";
  for (int i = 0; i < 10'000; ++i) csv += std::to_string(i) + "\n";
  auto e = Export(Builder::Csv, {Source("n.csv", csv)}).value();
  EXPECT_EQ(e.num_rows, 10'000);
  // 2048-row groups, two per file: 4096 + 4096 + 1808.
  ASSERT_EQ(e.shards.size(), 3u);
  EXPECT_EQ(e.shards[0].row_group_rows, (std::vector<int64_t>{2048, 2048}));
  EXPECT_EQ(e.shards[2].num_rows, 10'000 - 2 * 4096);
  auto rows = Rows(e);
  for (int i = 0; i < 10'000; i += 997) EXPECT_EQ(rows[i], std::to_string(i));  // in order
}

TEST_F(ParquetExport, TsvGzipJsonLinesAndText) {
  std::string tsv = "a\tb\n1\tx y\n2\tz\n";
  std::string gz = dir_.File("src/t.tsv.gz");
  std::filesystem::create_directories(dir_.path() / "src");
  {
    auto r =
        engine_->Run(Query("COPY (SELECT * FROM (VALUES (1, 'x y'), (2, 'z')) t(a, b)) TO "
                           "$1 (FORMAT csv, DELIMITER E'\\t', HEADER, COMPRESSION gzip)",
                           {gz}));
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  boost::json::object tab{{"sep", "\t"}};
  auto tr = Export(Builder::Csv, {{gz, std::filesystem::file_size(gz)}}, tab);
  ASSERT_TRUE(tr.has_value()) << tr.error().message;
  EXPECT_EQ(Rows(*tr), (std::vector<std::string>{"1|x y", "2|z"}));

  auto j =
      Export(Builder::Json,
             {Source("a.jsonl", "{\"a\": 1, \"t\": \"Zoë\"}\n{\"a\": null, \"t\": \"日本\"}\n"),
              Source("b.jsonl", "{\"a\": 3, \"extra\": true}\n")});
  ASSERT_TRUE(j.has_value()) << j.error().message;
  EXPECT_EQ(j->num_rows, 3);  // schema drift between files: union by name
  EXPECT_EQ(j->columns.size(), 3u);
  auto text = Export(Builder::Text, {Source("a.txt", "first line\nsecond, with \"quotes\"\n")});
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_EQ(Rows(*text), (std::vector<std::string>{"first line", "second, with \"quotes\""}));
  EXPECT_EQ(text->columns[0].name, "text");
}

TEST_F(ParquetExport, ParquetWithSmallRowGroupsIsIndexedNotCopied) {
  std::filesystem::create_directories(dir_.path() / "src");
  std::string small = dir_.File("src/small.parquet");
  ASSERT_TRUE(engine_
                  ->Run(Query("COPY (SELECT range AS i FROM range(5000)) TO $1 "
                              "(FORMAT parquet, ROW_GROUP_SIZE 2048)",
                              {small}))
                  .has_value());
  auto e = Export(Builder::Parquet, {{small, std::filesystem::file_size(small)}}).value();
  ASSERT_EQ(e.shards.size(), 1u);
  EXPECT_EQ(e.shards[0].native_source, std::optional<size_t>(0));
  EXPECT_EQ(e.shards[0].local_path, small);
  EXPECT_EQ(e.shards[0].row_group_rows, (std::vector<int64_t>{2048, 2048, 904}));
  // Row groups over the native bound: rewritten into small ones.
  std::string big = dir_.File("src/big.parquet");
  ASSERT_TRUE(engine_
                  ->Run(Query("COPY (SELECT range AS i FROM range(20000)) TO $1 "
                              "(FORMAT parquet, ROW_GROUP_SIZE 20480)",
                              {big}))
                  .has_value());
  auto r = Export(Builder::Parquet, {{big, std::filesystem::file_size(big)}}).value();
  EXPECT_FALSE(r.shards[0].native_source.has_value());
  EXPECT_EQ(r.num_rows, 20000);
  EXPECT_EQ(r.shards.size(), 5u);
}

TEST_F(ParquetExport, PartialPastTheCaps) {
  std::string csv = "n,s\n";
  for (int i = 0; i < 20'000; ++i) csv += std::to_string(i) + ",text " + std::to_string(i) + "\n";
  limits_.max_parquet_bytes = 1;  // the first shard only
  auto e = Export(Builder::Csv, {Source("p.csv", csv)}).value();
  EXPECT_TRUE(e.partial);
  EXPECT_EQ(e.shards.size(), 1u);
  EXPECT_EQ(e.num_rows, 4096);
  EXPECT_EQ(e.estimated_num_rows, std::optional<int64_t>(20'000));
  // The source cap leaves whole files out and estimates their rows.
  limits_.max_parquet_bytes = 1ull << 30;
  limits_.max_source_bytes = csv.size();
  auto two = Export(Builder::Csv, {Source("p1.csv", csv), Source("p2.csv", csv)}).value();
  EXPECT_TRUE(two.partial);
  EXPECT_EQ(two.num_rows, 20'000);
  EXPECT_EQ(two.estimated_num_rows, std::optional<int64_t>(40'000));
}

TEST_F(ParquetExport, BadDataIsAClearError) {
  auto code = [](const Result<SplitExport>& r) {
    return r ? std::string("ok") : std::string(Describe(r.error().code).name);
  };
  // An empty file, garbage named .csv, a cut Parquet file, invalid UTF-8.
  auto empty = Export(Builder::Csv, {Source("e.csv", "")});
  EXPECT_FALSE(empty.has_value()) << empty->num_rows << " rows, " << empty->columns.size();
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 131) % 256);
  auto junk = Export(Builder::Csv, {Source("g.csv", garbage)});
  EXPECT_FALSE(junk.has_value()) << junk->num_rows;
  std::string whole = dir_.File("src/whole.parquet");
  ASSERT_TRUE(engine_
                  ->Run(Query("COPY (SELECT range AS i FROM range(5000)) TO $1 "
                              "(FORMAT parquet)",
                              {whole}))
                  .has_value());
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto cut = Export(Builder::Parquet, {Source("cut.parquet", bytes.substr(0, bytes.size() / 2))});
  EXPECT_EQ(code(cut), "Unprocessable");
  auto latin1 = Export(Builder::Csv, {Source("l.csv", "a\ncaf\xe9\n")});
  EXPECT_EQ(code(latin1), "Unprocessable");
  // The same bytes read as the config says they are encoded.
  auto declared = Export(Builder::Csv, {Source("l2.csv", "a\ncaf\xe9\n")},
                         boost::json::object{{"encoding", "latin-1"}});
  ASSERT_TRUE(declared.has_value()) << declared.error().message;
  EXPECT_EQ(Rows(*declared), (std::vector<std::string>{"café"}));
  auto bad_param =
      Export(Builder::Csv, {Source("b.csv", "a\n1\n")}, boost::json::object{{"sep", 3}});
  EXPECT_EQ(code(bad_param), "BadRequest");
}

// DuckDB's read_json recurses once per nesting level while it guesses types: 100,000
// nested lists overflowed its stack and killed the process. Such a file is refused first.
TEST_F(ParquetExport, DeeplyNestedJsonIsRefusedBeforeDuckDBReadsIt) {
  std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}\n";
  auto r = Export(Builder::Json, {Source("deep.jsonl", deep)});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
  EXPECT_TRUE(r.error().message.starts_with("DatasetGenerationError: ")) << r.error().message;
  EXPECT_NE(r.error().message.find("deeper than 64"), std::string::npos) << r.error().message;
  // Brackets inside strings do not count, and 64 levels are fine.
  std::string ok = "{\"t\":\"" + std::string(1000, '[') + "\\\"\",\"a\":" + std::string(63, '[') +
                   std::string(63, ']') + "}\n";
  auto fine = Export(Builder::Json, {Source("ok.jsonl", ok)});
  ASSERT_TRUE(fine.has_value()) << fine.error().message;
  EXPECT_EQ(fine->num_rows, 1);
  auto zst = Export(Builder::Json, {Source("z.jsonl.zst", "x")});
  ASSERT_FALSE(zst.has_value());
  EXPECT_TRUE(zst.error().message.starts_with("FileFormatNotSupportedError: "));
}

TEST_F(ParquetExport, ABigCellAndManyColumns) {
  std::string cell(50 << 20, 'x');
  auto big = Export(Builder::Csv, {Source("big.csv", "id,blob\n1," + cell + "\n2,y\n")});
  ASSERT_TRUE(big.has_value()) << big.error().message;
  EXPECT_EQ(big->num_rows, 2);
  std::string header, row;
  for (int i = 0; i < 1200; ++i) {
    header += (i ? ",c" : "c") + std::to_string(i);
    row += (i ? "," : "") + std::to_string(i);
  }
  auto wide = Export(Builder::Csv, {Source("w.csv", header + "\n" + row + "\n")});
  ASSERT_TRUE(wide.has_value()) << wide.error().message;
  EXPECT_EQ(wide->columns.size(), 1200u);
}

}  // namespace
}  // namespace hangar::services::viewer

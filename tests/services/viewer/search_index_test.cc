// services/viewer: /search's terms (text_terms.h), its index on disk (search_index.h), BM25
// ranking, and the indexes built from Parquet files on their own thread (search_indexes.h).
// Scores are worked out by hand from the formula the header gives.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../../duckdb/test_dir.h"
#include "services/viewer/search_indexes.h"
#include "services/viewer/text_terms.h"

namespace hangar::services::viewer {
namespace {

using duckdb::Engine;
using duckdb::Query;
using duckdb::testing::TestDir;

std::vector<std::string> Cut(std::string_view text, std::string_view language = "") {
  std::vector<std::string> out;
  TermCutter cutter(language);
  cutter.Cut(text, out);
  return out;
}

using Terms = std::vector<std::string>;

TEST(TermCutter, FoldsSplitsAndStems) {
  EXPECT_EQ(Cut("The Running DOGS, jumped!"), (Terms{"the", "run", "dog", "jump"}));
  EXPECT_EQ(Cut("x-ray 2001:a"), (Terms{"x", "rai", "2001", "a"}));
  EXPECT_EQ(Cut("  ...  "), Terms{});
  EXPECT_EQ(Cut(""), Terms{});
}

TEST(TermCutter, FoldsAccentsAndCaseOfEveryScript) {
  EXPECT_EQ(Cut("Amélie CAFÉ"), (Terms{"ameli", "cafe"}));
  EXPECT_EQ(Cut("Straße"), (Terms{"strass"}));
  // Letters of other scripts are terms; their punctuation separates.
  EXPECT_EQ(Cut("東京「物語」"), (Terms{"東京", "物語"}));
  EXPECT_EQ(Cut("«Москва»"), (Terms{"москва"}));
}

TEST(TermCutter, SkipsLongWordsAndInvalidText) {
  std::string long_word(kMaxTermBytes + 1, 'a');
  EXPECT_EQ(Cut("short " + long_word + " word"), (Terms{"short", "word"}));
  EXPECT_EQ(Cut(std::string("ab\xff\xfe"
                            "cd caf\xc3")),
            (Terms{"ab", "cd", "caf"}));
}

TEST(TermCutter, UsesTheLanguagesStemmer) {
  EXPECT_EQ(TermCutter().language(), "porter");
  EXPECT_EQ(TermCutter("xx").language(), "porter");
  EXPECT_EQ(TermCutter("fr").language(), "fr");
  EXPECT_EQ(Cut("continuellement", "fr"), (Terms{"continuel"}));
  EXPECT_EQ(Cut("continuellement"), (Terms{"continuel"}));  // porter: another rule, same stem
  EXPECT_EQ(Cut("running", "fr"), (Terms{"running"}));
}

class Index : public ::testing::Test {
 protected:
  std::string Dir(std::string_view name) { return dir_.File(name); }
  // Writes rows 0… of `docs` (terms separated by spaces; "" a row of no term).
  SearchIndex Build(const std::vector<std::string>& docs, uint32_t buckets = 4,
                    size_t flush_bytes = 16) {
    std::string d = Dir("idx" + std::to_string(++n_));
    auto w = SearchIndexWriter::Create(d, buckets, flush_bytes);
    EXPECT_TRUE(w.has_value());
    for (size_t r = 0; r < docs.size(); ++r) {
      Terms t;
      for (size_t i = 0; i < docs[r].size();) {
        size_t j = docs[r].find(' ', i);
        if (j == std::string::npos) j = docs[r].size();
        if (j > i) t.push_back(docs[r].substr(i, j - i));
        i = j + 1;
      }
      EXPECT_TRUE((*w)->Add(r * 10, t).has_value());  // row numbers need not be dense
    }
    EXPECT_TRUE((*w)->Finish("porter").has_value());
    return SearchIndex::Open(d).value();
  }
  TestDir dir_;
  int n_ = 0;
};

TEST_F(Index, KeepsEveryPostingWithItsCounts) {
  SearchIndex index = Build({"a b a", "", "b c", "a"});
  EXPECT_EQ(index.docs(), 4u);
  EXPECT_DOUBLE_EQ(index.average_length(), 6.0 / 4);
  EXPECT_EQ(index.language(), "porter");
  auto a = index.Lookup("a").value();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].row, 0u);
  EXPECT_EQ(a[0].tf, 2u);
  EXPECT_EQ(a[0].length, 3u);
  EXPECT_EQ(a[1].row, 30u);
  EXPECT_EQ(a[1].tf, 1u);
  EXPECT_EQ(a[1].length, 1u);
  EXPECT_EQ(index.Lookup("b").value().size(), 2u);
  EXPECT_EQ(index.Lookup("c").value().at(0).row, 20u);
  EXPECT_TRUE(index.Lookup("zzz").value().empty());
}

TEST_F(Index, SpillsAndSortsManyRowsAcrossBuckets) {
  std::vector<std::string> docs;
  for (int r = 0; r < 3000; ++r) docs.push_back("t" + std::to_string(r % 7) + " common");
  SearchIndex index = Build(docs, 8, 1000);
  auto common = index.Lookup("common").value();
  ASSERT_EQ(common.size(), 3000u);
  for (size_t i = 0; i < common.size(); ++i) ASSERT_EQ(common[i].row, i * 10);
  EXPECT_EQ(index.Lookup("t3").value().size(), 429u);  // rows 3, 10, …, 2998
  // Nothing but the buckets and meta is left.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(Dir("idx1"))) {
    ++files;
    EXPECT_NE(e.path().filename().string().rfind("raw", 0), 0u) << e.path();
  }
  EXPECT_EQ(files, 9u);
}

TEST_F(Index, RefusesRowsOutOfOrder) {
  auto w = SearchIndexWriter::Create(Dir("o"), 2).value();
  Terms t{"a"};
  ASSERT_TRUE(w->Add(5, t).has_value());
  EXPECT_EQ(w->Add(5, t).error().code, ErrorCode::BadRequest);
}

TEST_F(Index, OpenRefusesAMissingOrForeignIndex) {
  EXPECT_EQ(SearchIndex::Open(Dir("none")).error().code, ErrorCode::NotFound);
  std::filesystem::create_directory(Dir("bad"));
  std::ofstream(Dir("bad/meta")) << R"({"version": 9, "docs": 1})";
  EXPECT_EQ(SearchIndex::Open(Dir("bad")).error().code, ErrorCode::Internal);
}

TEST_F(Index, ADamagedBucketIsAnError) {
  SearchIndex index = Build({"a"}, 1);
  std::ofstream(Dir("idx1/b0"), std::ios::trunc) << "HSI1\x05";
  EXPECT_EQ(index.Lookup("a").error().code, ErrorCode::Internal);
}

double Bm25(double n, double df, double tf, double len, double avg) {
  double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
  return idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * len / avg));
}

TEST_F(Index, RanksByBm25ThenRow) {
  // rows 0, 10, 20, 30, 40; average length 12 / 5.
  SearchIndex index = Build({"cat dog", "cat", "dog dog fish", "fish", "cat fish cat x"});
  auto r = RankBm25(index, {"cat"}, 0, 10).value();
  EXPECT_EQ(r.total, 3u);
  // cat: df 3. Row 10 (tf 1, length 1) beats row 40 (tf 2, length 4)?
  double avg = 12.0 / 5, s0 = Bm25(5, 3, 1, 2, avg), s10 = Bm25(5, 3, 1, 1, avg),
         s40 = Bm25(5, 3, 2, 4, avg);
  ASSERT_GT(s10, s40);
  ASSERT_GT(s40, s0);
  EXPECT_EQ(r.rows, (std::vector<uint64_t>{10, 40, 0}));
  // Two terms: a row holding either counts; scores add up.
  r = RankBm25(index, {"dog", "fish", "dog"}, 0, 10).value();
  EXPECT_EQ(r.total, 4u);
  double d0 = Bm25(5, 2, 1, 2, avg), d20 = Bm25(5, 2, 2, 3, avg) + Bm25(5, 3, 1, 3, avg),
         d30 = Bm25(5, 3, 1, 1, avg), d40 = Bm25(5, 3, 1, 4, avg);
  std::vector<std::pair<double, uint64_t>> want{{d0, 0}, {d20, 20}, {d30, 30}, {d40, 40}};
  std::sort(want.begin(), want.end(), [](auto x, auto y) { return x.first > y.first; });
  std::vector<uint64_t> want_rows;
  for (auto& w : want) want_rows.push_back(w.second);
  EXPECT_EQ(r.rows, want_rows);
  // Pages.
  EXPECT_EQ(RankBm25(index, {"dog", "fish"}, 1, 2).value().rows,
            (std::vector<uint64_t>{want_rows[1], want_rows[2]}));
  EXPECT_TRUE(RankBm25(index, {"dog", "fish"}, 4, 2).value().rows.empty());
  EXPECT_EQ(RankBm25(index, {}, 0, 10).value().total, 0u);
  // Equal scores: by row.
  SearchIndex ties = Build({"a b", "b a", "a c", "z"});
  EXPECT_EQ(RankBm25(ties, {"a"}, 0, 10).value().rows, (std::vector<uint64_t>{0, 10, 20}));
}

class Indexes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = duckdb::testing::TestOptions(dir_.path().string());
    o.allow_writes = true;
    engine_ = Engine::Open(o).value();
  }
  // A Parquet file of `select`, named by a fake sha256 `n`.
  SearchIndexSpec::File Write(int n, duckdb::Sql select, uint64_t offset) {
    Sha256 sha = Sha256::ParseHex(std::string(63, '0') + char('0' + n)).value();
    duckdb::SqlText sql("COPY (");
    sql += select;
    sql += ") TO $1 (FORMAT parquet, ROW_GROUP_SIZE 2048)";
    EXPECT_TRUE(engine_->Run(Query(std::move(sql), {dir_.File(sha.Hex())})).has_value());
    auto rows =
        engine_->Run(Query("SELECT count(*) FROM read_parquet($1)", {dir_.File(sha.Hex())}));
    return {sha, offset, uint64_t(std::get<int64_t>(rows.value().rows[0][0])), 1000};
  }
  SearchIndexes::LocalPath Local() {
    return [this](const Sha256& s) -> Result<std::string> { return dir_.File(s.Hex()); };
  }
  TestDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(Indexes, BuildsOnDemandFromTheFilesTextColumns) {
  SearchIndexSpec spec;
  // 20,000 rows in two files: more than one query a file reads.
  spec.files.push_back(Write(1,
                             "SELECT i, CASE WHEN i % 1000 = 7 THEN 'Zebra crossing' ELSE 'road' "
                             "END AS t, ['x', 'Zebras'] AS l FROM range(12000) r(i)",
                             0));
  spec.files.push_back(
      Write(2, "SELECT i, NULL::VARCHAR AS t, NULL AS l FROM range(8000) r(i)", 12000));
  spec.columns = {"t", "l"};
  spec.owner = SearchIndexOwner(7, "default", "train");
  spec.key = SearchIndexKey(spec);
  EXPECT_EQ(spec.key.rfind("7-", 0), 0u);
  SearchIndexes indexes(dir_.File("search"), *engine_, Local());
  auto first = indexes.Get(spec);
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, ErrorCode::ResponseNotReady);
  indexes.WaitIdle();
  auto index = indexes.Get(spec).value();
  EXPECT_EQ(index->docs(), 20000u);
  auto zebra = index->Lookup("zebra").value();
  ASSERT_EQ(zebra.size(), 12000u);  // the list column holds "Zebras" in every row of file 1
  EXPECT_EQ(zebra[7].tf, 2u);
  EXPECT_EQ(zebra[7].length, 4u);
  EXPECT_EQ(index->Lookup("cross").value().size(), 12u);
  EXPECT_EQ(RankBm25(*index, Cut("crossings"), 0, 3).value().rows,
            (std::vector<uint64_t>{7, 1007, 2007}));
  // Another key (other columns) is another index.
  SearchIndexSpec other = spec;
  other.columns = {"t"};
  other.key = SearchIndexKey(other);
  EXPECT_NE(other.key, spec.key);
  // Another split's index: kept when the owner's newer index replaces the older one.
  SearchIndexSpec elsewhere = spec;
  elsewhere.owner = SearchIndexOwner(7, "default", "test");
  elsewhere.key = SearchIndexKey(elsewhere);
  EXPECT_NE(elsewhere.owner, spec.owner);
  EXPECT_EQ(indexes.Get(elsewhere).error().code, ErrorCode::ResponseNotReady);
  indexes.WaitIdle();
  EXPECT_EQ(indexes.Get(other).error().code, ErrorCode::ResponseNotReady);
  indexes.WaitIdle();
  EXPECT_TRUE(indexes.Get(other).has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("search/" + spec.key)));
  EXPECT_TRUE(std::filesystem::exists(dir_.File("search/" + other.key)));
  EXPECT_TRUE(std::filesystem::exists(dir_.File("search/" + elsewhere.key)));
}

TEST_F(Indexes, ADamagedIndexIsBuiltAgain) {
  SearchIndexSpec spec;
  spec.files.push_back(Write(3, "SELECT 'red fox ' || i AS t FROM range(500) r(i)", 0));
  spec.columns = {"t"};
  spec.owner = SearchIndexOwner(1, "default", "train");
  spec.key = SearchIndexKey(spec);
  std::string dir = dir_.File("search/" + spec.key);
  {
    SearchIndexes indexes(dir_.File("search"), *engine_, Local());
    EXPECT_EQ(indexes.Get(spec).error().code, ErrorCode::ResponseNotReady);
    indexes.WaitIdle();
    auto index = indexes.Get(spec).value();
    // A bucket cut short: the lookup fails, Discard drops it and builds it again.
    std::string bucket = dir + "/b" + std::to_string(TermBucket("fox", 16));
    std::filesystem::resize_file(bucket, 7);
    EXPECT_EQ(index->Lookup("fox").error().code, ErrorCode::Internal);
    indexes.Discard(spec);
    indexes.WaitIdle();
    EXPECT_EQ(indexes.Get(spec).value()->Lookup("fox").value().size(), 500u);
  }
  // A damaged meta, found by the next process: built again, not refused forever.
  std::ofstream(dir + "/meta", std::ios::trunc) << "{";
  SearchIndexes indexes(dir_.File("search"), *engine_, Local());
  EXPECT_EQ(indexes.Get(spec).error().code, ErrorCode::ResponseNotReady);
  indexes.WaitIdle();
  EXPECT_EQ(indexes.Get(spec).value()->Lookup("red").value().size(), 500u);
}

TEST_F(Index, PostingsOutOfOrderOrPastTheRowsAreDamage) {
  SearchIndex index = Build({"a", "a"}, 1);
  // Rewrite b0 by hand: one term "a", df 2, postings (row 0, tf 1, len 1) twice (delta 0).
  std::string b = "HSI1";
  b += char(1);
  b += char(1);
  b += 'a';
  b += char(2);
  b += char(0);
  b += std::string("\x00\x01\x01\x00\x01\x01", 6);
  std::ofstream(Dir("idx1/b0"), std::ios::binary | std::ios::trunc) << b;
  EXPECT_EQ(index.Lookup("a").error().code, ErrorCode::Internal);
  b.replace(b.size() - 3, 1, std::string(1, char(11)));  // row 11: past the last (10)
  std::ofstream(Dir("idx1/b0"), std::ios::binary | std::ios::trunc) << b;
  EXPECT_EQ(index.Lookup("a").error().code, ErrorCode::Internal);
  b.replace(b.size() - 3, 1, std::string(1, char(10)));  // rows 0 and 10: fine
  std::ofstream(Dir("idx1/b0"), std::ios::binary | std::ios::trunc) << b;
  EXPECT_EQ(index.Lookup("a").value().size(), 2u);
}

TEST_F(Indexes, AFailedBuildIsReportedAndAHalfWrittenOneRemoved) {
  std::filesystem::create_directories(dir_.File("search/abc.tmp-1234"));
  SearchIndexSpec spec;
  spec.files.push_back({Sha256::ParseHex(std::string(64, 'f')).value(), 0, 10, 10});
  spec.columns = {"t"};
  spec.key = "deadbeef";
  SearchIndexes indexes(dir_.File("search"), *engine_, Local());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("search/abc.tmp-1234")));
  EXPECT_EQ(indexes.Get(spec).error().code, ErrorCode::ResponseNotReady);
  indexes.WaitIdle();
  auto failed = indexes.Get(spec);
  EXPECT_EQ(failed.error().code, ErrorCode::UnexpectedError);
  EXPECT_NE(failed.error().message.find("could not be built"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.File("search")));
}

}  // namespace
}  // namespace hangar::services::viewer

// services/viewer/features.h: DuckDB type spellings as the datasets library's features
// (dataset-viewer.md §5), and which of them a search reads.

#include "services/viewer/features.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace hangar::services::viewer {
namespace {

namespace json = boost::json;

std::string F(std::string_view sql_type) { return json::serialize(FeatureOf(sql_type)); }

TEST(Features, ScalarsAreValuesWithArrowDtypes) {
  EXPECT_EQ(F("BIGINT"), R"j({"dtype":"int64","_type":"Value"})j");
  EXPECT_EQ(F("INTEGER"), R"j({"dtype":"int32","_type":"Value"})j");
  EXPECT_EQ(F("UTINYINT"), R"j({"dtype":"uint8","_type":"Value"})j");
  EXPECT_EQ(F("DOUBLE"), R"j({"dtype":"float64","_type":"Value"})j");
  EXPECT_EQ(F("FLOAT"), R"j({"dtype":"float32","_type":"Value"})j");
  EXPECT_EQ(F("BOOLEAN"), R"j({"dtype":"bool","_type":"Value"})j");
  EXPECT_EQ(F("VARCHAR"), R"j({"dtype":"string","_type":"Value"})j");
  EXPECT_EQ(F("BLOB"), R"j({"dtype":"binary","_type":"Value"})j");
  EXPECT_EQ(F("DATE"), R"j({"dtype":"date32","_type":"Value"})j");
  EXPECT_EQ(F("TIME"), R"j({"dtype":"time64[us]","_type":"Value"})j");
  EXPECT_EQ(F("TIMESTAMP"), R"j({"dtype":"timestamp[us]","_type":"Value"})j");
  EXPECT_EQ(F("TIMESTAMP_NS"), R"j({"dtype":"timestamp[ns]","_type":"Value"})j");
  EXPECT_EQ(F("TIMESTAMP WITH TIME ZONE"),
            R"j({"dtype":"timestamp[us, tz=UTC]","_type":"Value"})j");
  EXPECT_EQ(F("DECIMAL(18,3)"), R"j({"dtype":"decimal128(18, 3)","_type":"Value"})j");
  EXPECT_EQ(F("NULL"), R"j({"dtype":"null","_type":"Value"})j");
  EXPECT_EQ(F("ENUM(3 labels)"), R"j({"dtype":"string","_type":"Value"})j");
}

TEST(Features, NestedTypesAreListsDictsAndJson) {
  EXPECT_EQ(F("VARCHAR[]"), R"j({"feature":{"dtype":"string","_type":"Value"},"_type":"List"})j");
  EXPECT_EQ(F("DOUBLE[3]"),
            R"j({"feature":{"dtype":"float64","_type":"Value"},"length":3,"_type":"List"})j");
  EXPECT_EQ(
      F("BIGINT[][]"),
      R"j({"feature":{"feature":{"dtype":"int64","_type":"Value"},"_type":"List"},"_type":"List"})j");
  EXPECT_EQ(F(R"j(STRUCT("lang" VARCHAR, "my ""q"" col" INTEGER[]))j"),
            R"j({"lang":{"dtype":"string","_type":"Value"},)j"
            R"j("my \"q\" col":{"feature":{"dtype":"int32","_type":"Value"},"_type":"List"}})j");
  EXPECT_EQ(F(R"j(STRUCT("a" STRUCT("b" DATE))[])j"),
            R"j({"feature":{"a":{"b":{"dtype":"date32","_type":"Value"}}},"_type":"List"})j");
  EXPECT_EQ(F("MAP(VARCHAR, BIGINT)"), R"j({"_type":"Json"})j");
  EXPECT_EQ(F(R"j(UNION("n" INTEGER, "s" VARCHAR))j"), R"j({"_type":"Json"})j");
}

TEST(Features, UnknownOrMalformedSpellingsAreText) {
  for (std::string_view s : {"JSON", "", "STRUCT(", "STRUCT(\"a\" INTEGER", "DECIMAL(x,y)",
                             "VARCHAR[", "MAP(VARCHAR)", "BIGINT garbage"})
    EXPECT_EQ(F(s), R"j({"dtype":"string","_type":"Value"})j") << s;
  // Hostile nesting stays bounded (no stack overflow) and reads as text.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "STRUCT(\"a\" ";
  EXPECT_EQ(F(deep), R"j({"dtype":"string","_type":"Value"})j");
}

TEST(Features, ListAndDictFormsKeepColumnOrder) {
  std::vector<duckdb::Column> columns{{"z", duckdb::ColumnType::Integer, "BIGINT"},
                                      {"a", duckdb::ColumnType::String, "VARCHAR"}};
  EXPECT_EQ(json::serialize(FeatureList(columns)),
            R"j([{"feature_idx":0,"name":"z","type":{"dtype":"int64","_type":"Value"}},)j"
            R"j({"feature_idx":1,"name":"a","type":{"dtype":"string","_type":"Value"}}])j");
  EXPECT_EQ(json::serialize(FeatureDict(columns)),
            R"j({"z":{"dtype":"int64","_type":"Value"},"a":{"dtype":"string","_type":"Value"}})j");
}

TEST(Features, IndexableColumnsHoldStrings) {
  EXPECT_TRUE(IsIndexable(FeatureOf("VARCHAR")));
  EXPECT_TRUE(IsIndexable(FeatureOf("VARCHAR[]")));
  EXPECT_TRUE(IsIndexable(FeatureOf(R"j(STRUCT("n" INTEGER, "t" VARCHAR))j")));
  EXPECT_TRUE(IsIndexable(FeatureOf("MAP(VARCHAR, BIGINT)")));
  EXPECT_FALSE(IsIndexable(FeatureOf("BIGINT")));
  EXPECT_FALSE(IsIndexable(FeatureOf("BLOB")));
  EXPECT_FALSE(IsIndexable(FeatureOf(R"j(STRUCT("n" INTEGER)[])j")));
}

}  // namespace
}  // namespace hangar::services::viewer

// services/viewer/glob.h: data-file patterns as the datasets library matches them
// (dataset-viewer.md §7.2).

#include "services/viewer/glob.h"

#include <gtest/gtest.h>

#include <string>

namespace hangar::services::viewer {
namespace {

TEST(Glob, StarStaysInOneComponent) {
  EXPECT_TRUE(GlobMatch("*.csv", "data.csv"));
  EXPECT_FALSE(GlobMatch("*.csv", "data/data.csv"));
  EXPECT_TRUE(GlobMatch("data/train-*.csv", "data/train-0.csv"));
  EXPECT_FALSE(GlobMatch("data/train-*.csv", "data/test-0.csv"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbY"));
  EXPECT_TRUE(GlobMatch("*", "x"));
  EXPECT_FALSE(GlobMatch("Data.csv", "data.csv"));  // case-sensitive
}

TEST(Glob, DoubleStarSpansComponents) {
  EXPECT_TRUE(GlobMatch("**", "a/b/c.csv"));
  EXPECT_TRUE(GlobMatch("**/train/**", "data/train/shard_0.csv"));
  EXPECT_TRUE(GlobMatch("**/train/**", "train/x.csv"));
  EXPECT_FALSE(GlobMatch("**/train/**", "data/trainer/x.csv"));
  EXPECT_TRUE(GlobMatch("**/*.csv", "x.csv"));  // ** matches no component too
  EXPECT_TRUE(GlobMatch("a/**/**/b", "a/b"));
  EXPECT_FALSE(GlobMatch("a/**", "b/a"));
}

TEST(Glob, ClassesAndQuestionMarks) {
  // The split keyword delimiters of §7.2: - . _ space and digits.
  const std::string file_rule = "**/train[-._ 0-9]*";
  EXPECT_TRUE(GlobMatch(file_rule, "train.csv"));
  EXPECT_TRUE(GlobMatch(file_rule, "train1.csv"));
  EXPECT_TRUE(GlobMatch(file_rule, "x/train_a.csv"));
  EXPECT_FALSE(GlobMatch(file_rule, "trainfile.csv"));
  EXPECT_TRUE(GlobMatch("[!a]x", "bx"));
  EXPECT_FALSE(GlobMatch("[!a]x", "ax"));
  EXPECT_TRUE(GlobMatch("f?.csv", "f1.csv"));
  EXPECT_FALSE(GlobMatch("f?.csv", "f12.csv"));
  EXPECT_TRUE(GlobMatch("[]]", "]"));    // a leading ']' is a member
  EXPECT_TRUE(GlobMatch("a[b", "a[b"));  // unclosed: literal
}

TEST(Glob, BracesAreAlternatives) {
  EXPECT_TRUE(GlobMatch("*.{csv,tsv}", "a.tsv"));
  EXPECT_FALSE(GlobMatch("*.{csv,tsv}", "a.json"));
  EXPECT_TRUE(GlobMatch("{a,b{c,d}}/x", "bd/x"));
  EXPECT_TRUE(GlobMatch("{a", "{a"));  // unclosed: literal
}

// Patterns come from a README, so they are hostile input: many `**` and `*` must not take
// exponential time, and brace bombs match nothing instead of expanding.
TEST(Glob, HostilePatternsAreBounded) {
  std::string many_stars, deep;
  for (int i = 0; i < 200; ++i) many_stars += "**/*/";
  many_stars += "z";
  for (int i = 0; i < 100; ++i) deep += "a/";
  deep += "b";
  EXPECT_FALSE(GlobMatch(many_stars, deep));
  std::string stars(2000, '*');
  EXPECT_FALSE(GlobMatch(stars + "b", std::string(250, 'a')));
  EXPECT_FALSE(GlobMatch("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", "aaaaaaaaa"));
  EXPECT_TRUE(GlobMatch("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", "abababab"));
}

}  // namespace
}  // namespace hangar::services::viewer

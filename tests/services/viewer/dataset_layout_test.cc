// services/viewer/dataset_layout.h: configs and splits from README YAML and file patterns,
// each worked example of dataset-viewer.md §7.5 and the rules of §7.1–7.3.

#include "services/viewer/dataset_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hangar::services::viewer {
namespace {

using Files = std::vector<std::string>;

// "config: split=file,file; split=file" for compact comparisons.
std::string Describe(const DatasetLayout& layout) {
  std::string out;
  for (const auto& c : layout.configs) {
    if (!out.empty()) out += " | ";
    out += c.name + ":";
    if (!c.error_code.empty()) out += " !" + c.error_code;
    for (const auto& s : c.splits) {
      out += " " + s.name + "=";
      for (size_t i = 0; i < s.files.size(); ++i) out += (i ? "," : "") + s.files[i];
    }
  }
  return out;
}

std::string Layout(const Files& files, std::string_view readme = "") {
  auto layout = DeriveLayout(files, readme);
  if (!layout) return "error: " + layout.error().message;
  return Describe(*layout);
}

TEST(DatasetLayout, WorkedExamplesOfSection7_5) {
  EXPECT_EQ(Layout({"README.md", "data.csv"}), "default: train=data.csv");
  EXPECT_EQ(Layout({"train.csv", "test.csv", "validation.csv"}),
            "default: train=train.csv validation=validation.csv test=test.csv");
  EXPECT_EQ(Layout({"data/train/shard_0.csv", "data/test/shard_0.csv"}),
            "default: train=data/train/shard_0.csv test=data/test/shard_0.csv");
  EXPECT_EQ(Layout({"data/training.csv", "data/eval.csv", "data/valid.csv"}),
            "default: train=data/training.csv validation=data/valid.csv test=data/eval.csv");
  EXPECT_EQ(Layout({"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
                    "data/random-00000-of-00001.parquet"}),
            "default: train=data/train-00000-of-00002.parquet,data/train-00001-of-00002.parquet "
            "random=data/random-00000-of-00001.parquet");
  EXPECT_EQ(Layout({"trainfile.csv"}), "default: train=trainfile.csv");
  const std::string readme =
      "---\nconfigs:\n- config_name: main_data\n  data_files: \"main_data.csv\"\n"
      "- config_name: additional_data\n  data_files: \"additional_data.csv\"\n---\n# Card\n";
  EXPECT_EQ(Layout({"README.md", "main_data.csv", "additional_data.csv"}, readme),
            "additional_data: train=additional_data.csv | main_data: train=main_data.csv");
}

TEST(DatasetLayout, SplitKeywordsNeedADelimiter) {
  EXPECT_EQ(Layout({"my_train_file.csv", "dev-1.csv", "x.csv"}),
            "default: train=my_train_file.csv validation=dev-1.csv");
  EXPECT_EQ(Layout({"train1.csv", "test 2.csv"}), "default: train=train1.csv test=test 2.csv");
  // Directory rule wins over file names, and only split directories count.
  EXPECT_EQ(Layout({"data/train_set/a.csv", "test.csv"}), "default: train=data/train_set/a.csv");
}

TEST(DatasetLayout, IgnoresHiddenAndMetadataFiles) {
  EXPECT_EQ(Layout({".gitattributes", ".hidden/train.csv", "__pycache__/x.csv", "config.json",
                    "README.md", "rows.csv"}),
            "default: train=rows.csv");
}

TEST(DatasetLayout, BuilderFromTheMostFrequentExtension) {
  auto layout = DeriveLayout({"a.jsonl", "b.jsonl", "c.csv", "LICENSE"}, "").value();
  ASSERT_EQ(layout.configs.size(), 1u);
  EXPECT_EQ(layout.configs[0].builder, Builder::Json);
  EXPECT_EQ(Describe(layout), "default: train=a.jsonl,b.jsonl");
  // Compressed files count as their format; .tsv splits on tabs.
  layout = DeriveLayout({"train.tsv.gz", "test.tsv.zst"}, "").value();
  EXPECT_EQ(layout.configs[0].builder, Builder::Csv);
  EXPECT_EQ(layout.configs[0].params.at("sep").as_string(), "\t");
  EXPECT_EQ(Describe(layout), "default: train=train.tsv.gz test=test.tsv.zst");
  // A tie goes to Parquet.
  EXPECT_EQ(DeriveLayout({"a.csv", "a.parquet"}, "").value().configs[0].builder, Builder::Parquet);
  // Images decide an imagefolder, which the viewer does not read: a config error.
  layout = DeriveLayout({"a.png", "b.png", "meta.csv"}, "").value();
  EXPECT_EQ(layout.configs[0].error_code, "FileFormatNotSupportedError");
  EXPECT_EQ(Layout({"notes.md", "LICENSE"}), "default: !DataFilesNotFoundError");
  EXPECT_EQ(Layout({}), "default: !DataFilesNotFoundError");
}

TEST(DatasetLayout, YamlConfigsWithSplitsDirsAndDefaults) {
  const std::string readme = R"(---
configs:
- config_name: default
  data_files:
  - split: train
    path: "data/train-*.csv"
  - split: test
    path:
    - "holdout/b.csv"
    - "holdout/a.csv"
- config_name: extra
  data_files: "extra/*.jsonl"
- config_name: tab
  data_dir: "tab"
  sep: "\t"
viewer: true
---
)";
  Files files{"data/train-1.csv", "data/train-0.csv", "holdout/a.csv", "holdout/b.csv",
              "extra/x.jsonl",    "tab/train.tsv",    "tab/test.tsv",  "other.csv"};
  auto layout = DeriveLayout(files, readme).value();
  EXPECT_EQ(Describe(layout),
            "default: train=data/train-0.csv,data/train-1.csv test=holdout/b.csv,holdout/a.csv | "
            "extra: train=extra/x.jsonl | tab: train=tab/train.tsv test=tab/test.tsv");
  EXPECT_TRUE(layout.viewer);
  EXPECT_EQ(layout.configs[2].params.at("sep").as_string(), "\t");
  // default: true puts a config first.
  const std::string marked =
      "---\nconfigs:\n- config_name: a\n  data_files: a.csv\n- config_name: b\n"
      "  data_files: b.csv\n  default: true\nviewer: false\n---\n";
  layout = DeriveLayout({"a.csv", "b.csv"}, marked).value();
  EXPECT_EQ(Describe(layout), "b: train=b.csv | a: train=a.csv");
  EXPECT_FALSE(layout.viewer);
}

TEST(DatasetLayout, TheReadmesOneLanguage) {
  auto language = [](std::string_view yaml) {
    return DeriveLayout({"a.csv"}, "---\n" + std::string(yaml) + "\n---\n").value().language;
  };
  EXPECT_EQ(language("language: fr"), "fr");
  EXPECT_EQ(language("language:\n- de"), "de");
  EXPECT_EQ(language("language: [en, fr]"), "");  // several: the default stemmer
  EXPECT_EQ(language("language: 7"), "");
  EXPECT_EQ(language("license: mit"), "");
  EXPECT_EQ(DeriveLayout({"a.csv"}, "").value().language, "");
}

TEST(DatasetLayout, BadYamlIsAConfigNamesError) {
  auto error = [](std::string yaml) {
    auto r = DeriveLayout({"a.csv"}, "---\n" + yaml + "---\n");
    EXPECT_FALSE(r.has_value()) << yaml;
    return r ? std::string() : r.error().message;
  };
  EXPECT_TRUE(error("configs: [a\n").starts_with("ConfigNamesError: README.md"));
  EXPECT_EQ(error("configs: {a: 1}\n"), "ConfigNamesError: 'configs' in README.md must be a list");
  EXPECT_TRUE(error("configs:\n- data_files: a.csv\n").find("config_name") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a/b\n").find("'/'") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: ..\n").find("'..'") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a\n- config_name: a\n").find("twice") !=
              std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a\n  data_files:\n  - split: tr-ain\n"
                    "    path: a.csv\n")
                  .find("split name") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a\n  data_files:\n  - split: x\n    path: a.csv\n"
                    "  - split: x\n    path: a.csv\n")
                  .find("twice") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a\n  default: true\n- config_name: b\n"
                    "  default: true\n")
                  .find("more than one") != std::string::npos);
  EXPECT_TRUE(error("configs:\n- config_name: a\n  data_dir: ../x\n").find("data_dir") !=
              std::string::npos);
  // A pattern that matches nothing fails that config only.
  auto layout = DeriveLayout({"a.csv"},
                             "---\nconfigs:\n- config_name: a\n  data_files: missing/*.csv\n"
                             "- config_name: b\n  data_files: a.csv\n---\n")
                    .value();
  EXPECT_EQ(Describe(layout), "a: !DataFilesNotFoundError | b: train=a.csv");
}

TEST(DatasetLayout, SplitNames) {
  EXPECT_TRUE(ValidSplitName("train"));
  EXPECT_TRUE(ValidSplitName("train.v2"));
  EXPECT_TRUE(ValidSplitName("a_1"));
  EXPECT_FALSE(ValidSplitName(""));
  EXPECT_FALSE(ValidSplitName("a-b"));
  EXPECT_FALSE(ValidSplitName(".a"));
  EXPECT_FALSE(ValidSplitName("a."));
  EXPECT_FALSE(ValidSplitName("a..b"));
  EXPECT_FALSE(ValidSplitName("a/b"));
}

}  // namespace
}  // namespace hangar::services::viewer

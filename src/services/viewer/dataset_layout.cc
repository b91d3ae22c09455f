// Configs and splits of a dataset repo (dataset_layout.h, dataset-viewer.md §7).

#include "services/viewer/dataset_layout.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "services/repo/model_card.h"
#include "services/viewer/glob.h"

namespace hangar::services::viewer {
namespace json = boost::json;
namespace {

// §7.2: the split keywords and the characters that may delimit them in a name.
struct SplitKeywords {
  std::string_view split;
  std::vector<std::string_view> keywords;
};
const std::array<SplitKeywords, 3>& Keywords() {
  static const std::array<SplitKeywords, 3> kKeywords{{
      {"train", {"train", "training"}},
      {"validation", {"validation", "valid", "dev", "val"}},
      {"test", {"test", "testing", "eval", "evaluation"}},
  }};
  return kKeywords;
}
constexpr std::string_view kSep = "[-._ 0-9]";

// Files the datasets library never takes as data unless a pattern names them (§7.2).
bool Ignored(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    bool last = end == path.size();
    if (part.starts_with('.')) return true;
    if (!last && part.starts_with("__")) return true;
    if (last) {
      for (std::string_view name : {"README.md", "config.json", "dataset_info.json",
                                    "dataset_infos.json", "dummy_data.zip", "dataset_dict.json"})
        if (part == name) return true;
    }
    start = end + 1;
  }
  return false;
}

Error ConfigError(std::string message) {
  return MakeError(ErrorCode::Unprocessable, "ConfigNamesError: " + std::move(message));
}

// The split order of §7.2: train, validation, test, then the others by name.
void SortSplits(std::vector<SplitLayout>& splits) {
  auto rank = [](const std::string& n) {
    if (n == "train") return 0;
    if (n == "validation") return 1;
    if (n == "test") return 2;
    return 3;
  };
  std::stable_sort(splits.begin(), splits.end(), [&](const auto& a, const auto& b) {
    int ra = rank(a.name), rb = rank(b.name);
    return ra != rb ? ra < rb : (ra == 3 && a.name < b.name);
  });
}

// The split of `name` (a file name) in the sharded form `<split>-NNNNN-of-NNNNN*.*`.
std::optional<std::string> ShardedSplit(std::string_view name) {
  for (size_t dash = name.find('-'); dash != std::string_view::npos;
       dash = name.find('-', dash + 1)) {
    std::string_view rest = name.substr(dash + 1);
    auto digits = [](std::string_view s) {
      return s.size() == 5 &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (rest.size() >= 14 && digits(rest.substr(0, 5)) && rest.substr(5, 4) == "-of-" &&
        digits(rest.substr(9, 5)) && rest.substr(14).find('.') != std::string_view::npos) {
      std::string split(name.substr(0, dash));
      if (ValidSplitName(split)) return split;
    }
  }
  return std::nullopt;
}

// §7.2 over `files` (paths relative to the config's directory, already filtered).
std::vector<SplitLayout> AutoSplits(const std::vector<std::string>& rel,
                                    const std::vector<std::string>& full) {
  // 1. Sharded split names under data/.
  std::map<std::string, std::vector<std::string>> sharded;
  for (size_t i = 0; i < rel.size(); ++i) {
    std::string_view p = rel[i];
    if (!p.starts_with("data/") || p.find('/', 5) != std::string_view::npos) continue;
    if (auto split = ShardedSplit(p.substr(5))) sharded[*split].push_back(full[i]);
  }
  std::vector<SplitLayout> out;
  if (!sharded.empty()) {
    for (auto& [name, fs] : sharded) out.push_back({name, std::move(fs)});
    SortSplits(out);
    return out;
  }
  // 2. Directory names, then 3. file names.
  for (int rule = 0; rule < 2; ++rule) {
    out.clear();
    for (const auto& [split, keywords] : Keywords()) {
      std::vector<std::string> patterns;
      for (std::string_view kw : keywords) {
        std::string k(kw), s(kSep);
        if (rule == 0) {
          // "…/**/*": a file inside the directory, never the file of that name itself.
          patterns.insert(patterns.end(),
                          {"**/" + k + "/**/*", "**/" + k + s + "*/**/*", "**/*" + s + k + "/**/*",
                           "**/*" + s + k + s + "*/**/*"});
        } else {
          patterns.insert(patterns.end(), {"**/" + k + s + "*", "**/*" + s + k + s + "*"});
        }
      }
      SplitLayout layout{std::string(split), {}};
      for (size_t i = 0; i < rel.size(); ++i) {
        bool hit = std::any_of(patterns.begin(), patterns.end(),
                               [&](const std::string& p) { return GlobMatch(p, rel[i]); });
        if (hit) layout.files.push_back(full[i]);
      }
      if (!layout.files.empty()) out.push_back(std::move(layout));
    }
    if (!out.empty()) return out;
  }
  // 4. Everything in train.
  if (!full.empty()) out.push_back({"train", full});
  return out;
}

struct ExtensionInfo {
  std::string_view extension;
  Builder builder;
  int priority;  // ties: lower wins (§7.3)
};
constexpr std::array<ExtensionInfo, 9> kExtensions{{
    {".parquet", Builder::Parquet, 0},
    {".geoparquet", Builder::Parquet, 0},
    {".gpq", Builder::Parquet, 0},
    {".jsonl", Builder::Json, 3},
    {".ndjson", Builder::Json, 3},
    {".json", Builder::Json, 4},
    {".csv", Builder::Csv, 5},
    {".tsv", Builder::Csv, 5},
    {".txt", Builder::Text, 6},
}};
// Extensions with a reader elsewhere (arrow, lance, media folders, webdataset): they decide
// a config's builder as they would on the Hub, which makes it unsupported here.
constexpr std::array<std::string_view, 24> kOtherReaders{
    ".arrow", ".lance", ".tar",  ".png", ".jpg", ".jpeg", ".gif", ".bmp",
    ".tif",   ".tiff",  ".webp", ".wav", ".mp3", ".flac", ".ogg", ".opus",
    ".m4a",   ".mp4",   ".avi",  ".mkv", ".mov", ".webm", ".pdf", ".xml"};
constexpr std::array<std::string_view, 2> kCompressions{".gz", ".zst"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Each dot-suffix of the file name of `path`, lower-cased: "a/t.csv.gz" -> .csv, .gz.
std::vector<std::string> Suffixes(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  std::vector<std::string> out;
  size_t dot = name.find('.');
  while (dot != std::string_view::npos) {
    size_t next = name.find('.', dot + 1);
    std::string_view s = name.substr(dot, next == std::string_view::npos ? next : next - dot);
    if (s.size() > 1) out.push_back(Lower(s));
    dot = next;
  }
  return out;
}

// Whether `path` is readable by the builder of `extension`: the extension is its last
// suffix, or the one before a compression suffix.
bool HasExtension(std::string_view path, std::string_view extension) {
  auto s = Suffixes(path);
  if (!s.empty() && s.back() == extension) return true;
  return s.size() >= 2 && s[s.size() - 2] == extension &&
         std::find(kCompressions.begin(), kCompressions.end(), s.back()) != kCompressions.end();
}

// Chooses the builder from the most frequent extension of the config's files (§7.3) and
// keeps only the files that builder reads; sets `error` when nothing is left.
void ChooseBuilder(ConfigLayout& config) {
  std::map<std::string, int> counts;
  for (const auto& split : config.splits)
    for (const auto& f : split.files)
      for (auto& s : Suffixes(f)) ++counts[s];
  const ExtensionInfo* best = nullptr;
  int best_count = 0;
  std::string other;
  int other_count = 0;
  for (const auto& entry : counts) {
    const std::string& ext = entry.first;  // not a structured binding: clang 14 cannot capture one
    const int n = entry.second;
    auto it = std::find_if(kExtensions.begin(), kExtensions.end(),
                           [&](const ExtensionInfo& e) { return e.extension == ext; });
    if (it != kExtensions.end()) {
      if (!best || n > best_count || (n == best_count && it->priority < best->priority)) {
        best = &*it;
        best_count = n;
      }
    } else if (std::find(kOtherReaders.begin(), kOtherReaders.end(), ext) != kOtherReaders.end() &&
               n > other_count) {
      other = ext;
      other_count = n;
    }
  }
  if (other_count > best_count) {
    config.builder = Builder::Unsupported;
    config.extension = other;
    config.splits.clear();
    config.error_code = "FileFormatNotSupportedError";
    config.error = "files of type " + other + " cannot be shown by the viewer yet";
    return;
  }
  if (!best) {
    config.splits.clear();
    config.error_code = "DataFilesNotFoundError";
    config.error =
        "no data files found: the viewer reads .parquet, .csv, .tsv, .json, "
        ".jsonl, .ndjson and .txt files (also .gz and .zst compressed)";
    return;
  }
  config.builder = best->builder;
  config.extension = std::string(best->extension);
  // The datasets library reads every extension of the builder's family ("json" takes
  // .jsonl and .json); a .tsv config splits on tabs.
  for (auto& split : config.splits) {
    std::erase_if(split.files, [&](const std::string& f) {
      return std::none_of(kExtensions.begin(), kExtensions.end(), [&](const ExtensionInfo& e) {
        return e.builder == best->builder && HasExtension(f, e.extension);
      });
    });
  }
  std::erase_if(config.splits, [](const SplitLayout& s) { return s.files.empty(); });
  if (config.extension == ".tsv" && !config.params.contains("sep") &&
      !config.params.contains("delimiter"))
    config.params["sep"] = "\t";
}

// Files of `files` under `dir` ("" for all), with their paths relative to it.
void FilesUnder(const std::vector<std::string>& files, std::string_view dir,
                std::vector<std::string>& rel, std::vector<std::string>& full) {
  std::string prefix = dir.empty() ? "" : std::string(dir) + "/";
  for (const auto& f : files) {
    if (!f.starts_with(prefix)) continue;
    std::string r = f.substr(prefix.size());
    if (Ignored(r)) continue;
    rel.push_back(r);
    full.push_back(f);
  }
}

// Files matched by `pattern` (relative to `dir`), sorted; hidden and ignored files only
// when the pattern names them literally.
std::vector<std::string> Resolve(const std::vector<std::string>& files, std::string_view dir,
                                 const std::string& pattern) {
  std::string prefix = dir.empty() ? "" : std::string(dir) + "/";
  std::vector<std::string> out;
  for (const auto& f : files) {
    if (!f.starts_with(prefix)) continue;
    std::string_view r = std::string_view(f).substr(prefix.size());
    if (r == pattern || (GlobMatch(pattern, r) && !Ignored(r))) out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> Patterns(const json::value& v, std::string_view where) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.emplace_back(v.as_string());
  } else if (v.is_array()) {
    for (const auto& p : v.as_array()) {
      if (!p.is_string()) return ConfigError(std::string(where) + ": a path must be a string");
      out.emplace_back(p.as_string());
    }
  } else {
    return ConfigError(std::string(where) + ": expected a path or a list of paths");
  }
  return out;
}

// The splits of `data_files` (§7.1's three forms), as patterns.
Result<std::vector<std::pair<std::string, std::vector<std::string>>>> SplitPatterns(
    const json::value& data_files, const std::string& config) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::string where = "config '" + config + "' data_files";
  bool entries = data_files.is_array() && !data_files.as_array().empty() &&
                 data_files.as_array().front().is_object();
  if (!entries) {
    HANGAR_ASSIGN_OR_RETURN(auto patterns, Patterns(data_files, where));
    out.emplace_back("train", std::move(patterns));
    return out;
  }
  std::set<std::string> seen;
  for (const auto& e : data_files.as_array()) {
    const json::object* o = e.if_object();
    if (!o || o->size() != 2 || !o->contains("split") || !o->contains("path") ||
        !o->at("split").is_string())
      return ConfigError(where + ": each entry needs exactly 'split' and 'path'");
    std::string split(o->at("split").as_string());
    if (!ValidSplitName(split))
      return ConfigError(where + ": split name '" + split +
                         "' must be letters, digits and underscores, dots between words");
    if (!seen.insert(split).second)
      return ConfigError(where + ": split '" + split + "' is given twice");
    HANGAR_ASSIGN_OR_RETURN(auto patterns, Patterns(o->at("path"), where));
    out.emplace_back(std::move(split), std::move(patterns));
  }
  return out;
}

bool ValidConfigName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.starts_with('.')) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

// A relative directory without "." or ".." components.
bool ValidDataDir(std::string_view dir) {
  if (dir.empty() || dir.starts_with('/') || dir.ends_with('/')) return false;
  size_t start = 0;
  while (start <= dir.size()) {
    size_t end = dir.find('/', start);
    if (end == std::string_view::npos) end = dir.size();
    std::string_view part = dir.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// The config of one `configs:` entry.
Result<ConfigLayout> ConfigOf(const json::object& entry, const std::vector<std::string>& files) {
  ConfigLayout config;
  config.name = std::string(entry.at("config_name").as_string());
  std::string dir;
  if (const auto* d = entry.if_contains("data_dir")) {
    if (!d->is_string() || !ValidDataDir(d->as_string()))
      return ConfigError("config '" + config.name + "': data_dir must be a relative directory");
    dir = std::string(d->as_string());
  }
  for (const auto& [key, value] : entry) {
    if (key != "config_name" && key != "data_files" && key != "data_dir" && key != "default")
      config.params[key] = value;
  }
  if (const auto* df = entry.if_contains("data_files")) {
    HANGAR_ASSIGN_OR_RETURN(auto splits, SplitPatterns(*df, config.name));
    for (auto& [split, patterns] : splits) {
      SplitLayout layout{split, {}};
      std::set<std::string> seen;
      for (const auto& p : patterns)
        for (auto& f : Resolve(files, dir, p))
          if (seen.insert(f).second) layout.files.push_back(std::move(f));
      if (layout.files.empty()) {
        config.error_code = "DataFilesNotFoundError";
        config.error = "no file of the repo matches the data_files of split '" + split +
                       "' of config '" + config.name + "'";
        config.splits.clear();
        return config;
      }
      config.splits.push_back(std::move(layout));
    }
  } else {
    std::vector<std::string> rel, full;
    FilesUnder(files, dir, rel, full);
    config.splits = AutoSplits(rel, full);
  }
  ChooseBuilder(config);
  return config;
}

// Default first, then by name (§4.2, §7.4).
void OrderConfigs(std::vector<ConfigLayout>& configs, const std::string& default_name) {
  std::stable_sort(configs.begin(), configs.end(), [&](const auto& a, const auto& b) {
    bool da = a.name == default_name, db = b.name == default_name;
    return da != db ? da : a.name < b.name;
  });
}

}  // namespace

std::string_view BuilderName(Builder builder) {
  switch (builder) {
    case Builder::Parquet:
      return "parquet";
    case Builder::Csv:
      return "csv";
    case Builder::Json:
      return "json";
    case Builder::Text:
      return "text";
    case Builder::Unsupported:
      break;
  }
  return "unsupported";
}

bool ValidSplitName(std::string_view name) {
  if (name.empty()) return false;
  bool word = false;  // inside a run of \w
  for (char c : name) {
    bool w = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (w) {
      word = true;
    } else if (c == '.' && word) {
      word = false;
    } else {
      return false;
    }
  }
  return word;
}

Result<DatasetLayout> DeriveLayout(const std::vector<std::string>& files, std::string_view readme) {
  DatasetLayout layout;
  std::optional<json::object> card;
  if (!readme.empty()) {
    auto parsed = ParseCardData(readme);
    if (!parsed) return ConfigError("README.md: " + parsed.error().message);
    card = std::move(*parsed);
  }
  if (card) {
    if (const auto* v = card->if_contains("viewer"); v && v->is_bool())
      layout.viewer = v->as_bool();
    if (const auto* l = card->if_contains("language")) {
      const json::value* one = l;
      if (const auto* list = l->if_array()) one = list->size() == 1 ? &(*list)[0] : nullptr;
      if (one && one->is_string() && one->as_string().size() <= 32)
        layout.language = std::string(one->as_string());
    }
  }
  const json::value* configs = card ? card->if_contains("configs") : nullptr;
  if (!configs) {
    ConfigLayout config;
    config.name = "default";
    std::vector<std::string> rel, full;
    FilesUnder(files, "", rel, full);
    config.splits = AutoSplits(rel, full);
    ChooseBuilder(config);
    layout.configs.push_back(std::move(config));
    return layout;
  }
  if (!configs->is_array()) return ConfigError("'configs' in README.md must be a list");
  if (configs->as_array().size() > kMaxConfigs)
    return MakeError(ErrorCode::Unprocessable,
                     "DatasetWithTooManyConfigsError: the dataset has more than " +
                         std::to_string(kMaxConfigs) + " configs");
  std::set<std::string> names;
  std::vector<std::string> marked_default;
  for (const auto& e : configs->as_array()) {
    const json::object* entry = e.if_object();
    if (!entry) return ConfigError("each entry of 'configs' must be a mapping");
    const auto* name = entry->if_contains("config_name");
    if (!name || !name->is_string())
      return ConfigError("each entry of 'configs' needs a 'config_name'");
    std::string n(name->as_string());
    if (!ValidConfigName(n))
      return ConfigError("config name '" + n + "' is empty, too long, or holds '/' or '\\'");
    if (!names.insert(n).second) return ConfigError("config '" + n + "' is given twice");
    if (const auto* d = entry->if_contains("default"); d && d->is_bool() && d->as_bool())
      marked_default.push_back(n);
    HANGAR_ASSIGN_OR_RETURN(auto config, ConfigOf(*entry, files));
    layout.configs.push_back(std::move(config));
  }
  if (marked_default.size() > 1)
    return ConfigError("more than one config is marked default: " + marked_default[0] + ", " +
                       marked_default[1]);
  std::string default_name = !marked_default.empty()     ? marked_default[0]
                             : names.contains("default") ? std::string("default")
                                                         : std::string();
  OrderConfigs(layout.configs, default_name);
  return layout;
}

}  // namespace hangar::services::viewer

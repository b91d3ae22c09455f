#pragma once
// The configs and splits of a dataset repo (dataset-viewer.md §7): from the README's YAML
// `configs:` when it has one (§7.1), else one config `default` whose splits the file
// patterns decide (§7.2), each with the reader its files need (§7.3). Pure: the caller
// passes the file list and the README text of one revision.

#include <boost/json/object.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::services::viewer {

// The reader a config's files need (§7.3).
enum class Builder : uint8_t {
  Parquet,  // .parquet, .geoparquet, .gpq: indexed as they are when their row groups allow
  Csv,      // .csv (comma), .tsv (tab)
  Json,     // .jsonl, .ndjson, .json: JSON Lines or a JSON document
  Text,     // .txt: one row per line, one column `text`
  Unsupported,
};

// "parquet", "csv", "json", "text" (the datasets library's builder_name), "unsupported".
std::string_view BuilderName(Builder builder);

// One split: its name (matches ^\w+(\.\w+)*$) and its files, repo paths in order.
struct SplitLayout {
  std::string name;
  std::vector<std::string> files;
};

// One config of the dataset. A config whose files cannot be found or read keeps its place
// with `error` set (the viewer lists it under `failed`); its splits are then empty.
struct ConfigLayout {
  std::string name;
  Builder builder = Builder::Unsupported;
  // The extension that decided the builder (".csv"), also for an unsupported one (".png").
  std::string extension;
  // Builder parameters of the YAML entry (sep, delimiter, header, names, column_names,
  // quotechar, skiprows, encoding, field, …) as written; a .tsv config without a `sep`
  // gets "sep": "\t".
  boost::json::object params;
  std::vector<SplitLayout> splits;
  // Set when the config cannot be served: the viewer's error code (DataFilesNotFoundError,
  // FileFormatNotSupportedError, …) and its message.
  std::string error_code;
  std::string error;
};

// What the viewer shows of a dataset: configs in the Hub's order (the default first, then
// by name), `viewer` false when the README says `viewer: false`.
struct DatasetLayout {
  std::vector<ConfigLayout> configs;
  bool viewer = true;
  // The README's `language` when it names exactly one (a string, or a list of one), as
  // written ("fr"); "" otherwise. It picks the search's stemmer (§4.5).
  std::string language;
};

// At most this many configs (DatasetWithTooManyConfigsError past it).
inline constexpr size_t kMaxConfigs = 1000;

// The layout of a revision whose files are `files` (repo paths, any order) and whose
// README.md holds `readme` ("" without one). Errors: Unprocessable with the viewer code as
// the message's prefix ("ConfigNamesError: …") when the README's YAML is malformed, its
// `configs` is not a list of entries each with a valid, unique `config_name`, more than
// one config claims to be the default, a split is named twice or badly, or there are more
// than kMaxConfigs configs. Per-config problems are left in ConfigLayout::error instead.
Result<DatasetLayout> DeriveLayout(const std::vector<std::string>& files, std::string_view readme);

// Whether `name` can be a split's name: ^\w+(\.\w+)*$ in ASCII (§7.4).
bool ValidSplitName(std::string_view name);

}  // namespace hangar::services::viewer

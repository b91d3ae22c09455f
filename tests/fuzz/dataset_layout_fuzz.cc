// Dataset layouts (services::viewer::DeriveLayout, dataset-viewer.md §7): the README's YAML
// `configs:` and its glob patterns are a pusher's bytes. The input is a file list (one path
// per line) up to a line "===", then the README. Every split must name only listed files,
// under a valid split name, and config names must be unique.

#include <set>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "services/repo/model_card.h"
#include "services/viewer/dataset_layout.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = fuzz::AsText(data, size);
  size_t cut = input.find("\n===\n");
  std::string_view list = cut == std::string_view::npos ? std::string_view() : input.substr(0, cut);
  std::string_view readme = cut == std::string_view::npos ? input : input.substr(cut + 5);
  std::vector<std::string> files;
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find('\n', start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) files.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  std::set<std::string> listed(files.begin(), files.end());

  auto layout = services::viewer::DeriveLayout(files, readme);
  if (!layout) {
    FUZZ_CHECK(layout.error().code == ErrorCode::Unprocessable);
    FUZZ_CHECK(services::SplitFrontMatter(readme).has_yaml);
    return 0;
  }
  FUZZ_CHECK(!layout->configs.empty());
  std::set<std::string> names;
  for (const auto& config : layout->configs) {
    FUZZ_CHECK(names.insert(config.name).second);
    FUZZ_CHECK(config.name.find('/') == std::string::npos);
    if (!config.error_code.empty()) FUZZ_CHECK(config.splits.empty());
    std::set<std::string> splits;
    for (const auto& split : config.splits) {
      FUZZ_CHECK(services::viewer::ValidSplitName(split.name));
      FUZZ_CHECK(splits.insert(split.name).second);
      FUZZ_CHECK(!split.files.empty());
      for (const auto& f : split.files) FUZZ_CHECK(listed.contains(f));
    }
  }
  return 0;
}

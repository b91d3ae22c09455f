#pragma once
// Model / dataset cards: the YAML front matter of README.md (hf-api.md §3.3 cardData,
// §6.10 validate-yaml), parsed with yaml-cpp and given back as JSON.

#include <boost/json/object.hpp>

#include <optional>
#include <string_view>

#include "core/result.h"

namespace hangar::services {

// `readme` split at its YAML front matter: `yaml` is the text between a leading "---" line
// and the next "---" line (both excluded), `body` what follows that closing line. Without
// a complete front matter block, `yaml` is empty and `body` is all of `readme`; `has_yaml`
// says which. Views into `readme`.
struct CardParts {
  bool has_yaml = false;
  std::string_view yaml;
  std::string_view body;
};
CardParts SplitFrontMatter(std::string_view readme);

// The front matter of `readme` (between a leading "---" line and the next "---" line)
// as a JSON object; nullopt when there is none. Errors: BadRequest when the YAML is
// malformed or is not a mapping, naming the problem.
Result<std::optional<boost::json::object>> ParseCardData(std::string_view readme);

}  // namespace hangar::services

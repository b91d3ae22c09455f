#pragma once
// MLflow's search filter (model_registry.proto SearchRegisteredModels/SearchModelVersions
// `filter`): conditions joined by AND, each `<field> <op> <'string'>`, where a field is a
// name (`name`, `run_id`, …) or a tag (`tags.<key>`, the key optionally in backquotes or
// double quotes), an op is =, !=, LIKE or ILIKE (any case), and a string is in single or
// double quotes (a doubled quote stands for itself). Parsed from client bytes: fuzzed
// (tests/fuzz, docs/fuzzing.md).

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::api::registry {

struct FilterCondition {
  std::string field;  // "name", "run_id", …, or "tags" with `tag` set
  std::string tag;    // the tag key of a tags.<key> condition
  std::string op;     // "=", "!=", "LIKE", "ILIKE"
  std::string value;
};

// The conditions of `filter` ("" gives none). At most 1,000 bytes and 20 conditions.
// Errors: BadRequest saying where the filter stopped making sense.
Result<std::vector<FilterCondition>> ParseMlflowFilter(std::string_view filter);

}  // namespace hangar::api::registry

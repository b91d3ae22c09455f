#pragma once
// Request fields the registry's two faces (/api/v1 and MLflow's) both read: JSON members
// of the few shapes they use, and version numbers.

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::api::registry {

// An object member of strings ({"team": "risk"}), empty when absent or null.
// Errors: BadRequest (another type, a value not a string).
Result<std::map<std::string, std::string>> StringMapField(const boost::json::object& o,
                                                          std::string_view key);
// An array member of strings, empty when absent or null. Errors: BadRequest.
Result<std::vector<std::string>> StringListField(const boost::json::object& o,
                                                 std::string_view key);
// MLflow's repeated {key, value} member ("tags"), empty when absent. Errors: BadRequest.
Result<std::map<std::string, std::string>> KeyValueListField(const boost::json::object& o,
                                                             std::string_view key);
// A version number: digits, 1 to 2^63-1, given as a string ("3") or an integer.
// Errors: BadRequest naming `what`.
Result<int64_t> VersionNumber(std::string_view text, std::string_view what = "version");
Result<int64_t> VersionField(const boost::json::object& o, std::string_view key);

}  // namespace hangar::api::registry

#include "api/registry/registry_params.h"

#include "core/util.h"

namespace hangar::api::registry {
namespace json = boost::json;

namespace {
Error WrongType(std::string_view key, std::string_view shape) {
  return MakeError(ErrorCode::BadRequest,
                   "'" + std::string(key) + "' must be " + std::string(shape));
}
}  // namespace

Result<std::map<std::string, std::string>> StringMapField(const json::object& o,
                                                          std::string_view key) {
  std::map<std::string, std::string> out;
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return out;
  if (!v->is_object()) return WrongType(key, "an object of strings");
  for (const auto& kv : v->as_object()) {
    if (!kv.value().is_string()) return WrongType(key, "an object of strings");
    out[std::string(kv.key())] = std::string(kv.value().as_string());
  }
  return out;
}

Result<std::vector<std::string>> StringListField(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) return WrongType(key, "an array of strings");
  for (const auto& item : v->as_array()) {
    if (!item.is_string()) return WrongType(key, "an array of strings");
    out.emplace_back(item.as_string());
  }
  return out;
}

Result<std::map<std::string, std::string>> KeyValueListField(const json::object& o,
                                                             std::string_view key) {
  std::map<std::string, std::string> out;
  const auto* v = o.if_contains(key);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) return WrongType(key, "an array of {key, value}");
  for (const auto& item : v->as_array()) {
    const auto* obj = item.if_object();
    const json::value* k = obj ? obj->if_contains("key") : nullptr;
    const json::value* val = obj ? obj->if_contains("value") : nullptr;
    if (!k || !k->is_string() || (val && !val->is_string() && !val->is_null()))
      return WrongType(key, "an array of {key, value}");
    out[std::string(k->as_string())] = val && val->is_string() ? std::string(val->as_string()) : "";
  }
  return out;
}

Result<int64_t> VersionNumber(std::string_view text, std::string_view what) {
  auto n = ParseUint64(text);
  if (!n || *n == 0 || *n > static_cast<uint64_t>(INT64_MAX))
    return MakeError(ErrorCode::BadRequest, "'" + std::string(what) +
                                                "' must be a version "
                                                "number, not '" +
                                                std::string(text.substr(0, 40)) + "'");
  return static_cast<int64_t>(*n);
}

Result<int64_t> VersionField(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v && v->is_int64() && v->as_int64() > 0) return v->as_int64();
  if (v && v->is_string()) return VersionNumber(v->as_string(), key);
  return MakeError(ErrorCode::BadRequest, "'" + std::string(key) +
                                              "' must be a version number: a positive integer or "
                                              "its digits as a string");
}

}  // namespace hangar::api::registry

#include "services/model_card.h"

#include <yaml-cpp/yaml.h>

namespace hangar::services {

namespace json = boost::json;

namespace {

// YAML scalars stay strings unless they read as a bool, an integer or a float, so
// `license: apache-2.0` stays a string and `likes: 3` becomes a number.
json::value Scalar(const YAML::Node& n) {
  if (n.Tag() == "!") return json::value(n.Scalar());  // quoted: always a string
  const std::string& s = n.Scalar();
  if (s == "true" || s == "True" || s == "false" || s == "False") {
    return json::value(s[0] == 't' || s[0] == 'T');
  }
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return json::value(static_cast<int64_t>(i));
    double d = std::stod(s, &used);
    if (used == s.size()) return json::value(d);
  } catch (const std::exception&) {
  }
  return json::value(s);
}

json::value ToJson(const YAML::Node& n, int depth) {
  if (depth > 64) throw YAML::Exception(YAML::Mark::null_mark(), "nesting too deep");
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return Scalar(n);
    case YAML::NodeType::Sequence: {
      json::array a;
      for (const auto& item : n) a.push_back(ToJson(item, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      json::object o;
      for (const auto& kv : n) o[kv.first.as<std::string>()] = ToJson(kv.second, depth + 1);
      return o;
    }
    default: return nullptr;
  }
}

}  // namespace

Result<std::optional<json::object>> ParseCardData(std::string_view readme) {
  auto starts_with_marker = [](std::string_view s) {
    return s.substr(0, 4) == "---\n" || s.substr(0, 5) == "---\r\n";
  };
  if (!starts_with_marker(readme)) return std::optional<json::object>{};
  size_t body = readme.find('\n') + 1;
  size_t end = body;
  for (;;) {
    size_t nl = readme.find('\n', end);
    std::string_view line = readme.substr(end, nl == std::string_view::npos ? nl : nl - end);
    if (line == "---" || line == "---\r") break;
    if (nl == std::string_view::npos) return std::optional<json::object>{};  // unterminated
    end = nl + 1;
  }
  std::string yaml(readme.substr(body, end - body));
  try {
    YAML::Node root = YAML::Load(yaml);
    if (root.IsNull()) return std::optional<json::object>(json::object{});
    if (!root.IsMap()) {
      return MakeError(ErrorCode::BadRequest, "model card metadata must be a YAML mapping");
    }
    return std::optional<json::object>(ToJson(root, 0).as_object());
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::BadRequest, std::string("invalid YAML in model card: ") + e.what());
  }
}

}  // namespace hangar::services

#include "services/repo/model_card.h"

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

// Values a card's metadata may expand to. An alias repeats the node its anchor names, so
// without a cap a few hundred bytes of anchors stand for billions of values (294 bytes
// made 123 million: "billion laughs"); real cards have a few hundred.
constexpr size_t kMaxCardValues = 100000;

// `n` as JSON; `budget` counts down the values still allowed (kMaxCardValues).
json::value ToJson(const YAML::Node& n, int depth, size_t& budget) {
  if (depth > 64) throw YAML::Exception(YAML::Mark::null_mark(), "nesting too deep");
  if (budget == 0) {
    throw YAML::Exception(YAML::Mark::null_mark(), "more than " + std::to_string(kMaxCardValues) +
                                                       " values (aliases included)");
  }
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return Scalar(n);
    case YAML::NodeType::Sequence: {
      json::array a;
      for (const auto& item : n) a.push_back(ToJson(item, depth + 1, budget));
      return a;
    }
    case YAML::NodeType::Map: {
      json::object o;
      for (const auto& kv : n) {
        o[kv.first.as<std::string>()] = ToJson(kv.second, depth + 1, budget);
      }
      return o;
    }
    default:
      return nullptr;
  }
}

}  // namespace

CardParts SplitFrontMatter(std::string_view readme) {
  CardParts parts{false, {}, readme};
  if (readme.substr(0, 4) != "---\n" && readme.substr(0, 5) != "---\r\n") return parts;
  size_t start = readme.find('\n') + 1;
  for (size_t line_start = start;;) {
    size_t nl = readme.find('\n', line_start);
    std::string_view line = readme.substr(
        line_start, nl == std::string_view::npos ? std::string_view::npos : nl - line_start);
    if (line == "---" || line == "---\r") {
      parts.has_yaml = true;
      parts.yaml = readme.substr(start, line_start - start);
      parts.body = nl == std::string_view::npos ? std::string_view{} : readme.substr(nl + 1);
      return parts;
    }
    if (nl == std::string_view::npos) return parts;  // unterminated: no front matter
    line_start = nl + 1;
  }
}

Result<std::optional<json::object>> ParseCardData(std::string_view readme) {
  CardParts parts = SplitFrontMatter(readme);
  if (!parts.has_yaml) return std::optional<json::object>{};
  std::string yaml(parts.yaml);
  try {
    YAML::Node root = YAML::Load(yaml);
    if (root.IsNull()) return std::optional<json::object>(json::object{});
    if (!root.IsMap()) {
      return MakeError(ErrorCode::BadRequest, "model card metadata must be a YAML mapping");
    }
    size_t budget = kMaxCardValues;
    return std::optional<json::object>(ToJson(root, 0, budget).as_object());
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::BadRequest, std::string("invalid YAML in model card: ") + e.what());
  }
}

}  // namespace hangar::services

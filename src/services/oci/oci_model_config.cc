#include "services/oci/oci_model_config.h"
#include "core/util.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cctype>

#include "services/repo/model_card.h"

namespace hangar::services {
namespace {

namespace json = boost::json;

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The kinds of oci.md §11.2, as the `<kind>` of application/vnd.cncf.model.<kind>.v1.raw.
enum class Kind { Weight, WeightConfig, Doc, Code, Dataset };

std::string RawType(Kind k) {
  static constexpr std::array<std::string_view, 5> kNames = {"weight", "weight.config", "doc",
                                                             "code", "dataset"};
  return "application/vnd.cncf.model." + std::string(kNames[static_cast<int>(k)]) + ".v1.raw";
}

struct Guess {
  Kind kind;
  bool untested;
};

// Firm rules first (names a hub model repo is known to use), then guesses by extension.
// `base` is the lower-cased file name, `ext` what follows its last '.' ("" for none).
std::optional<Guess> Common(std::string_view base, std::string_view ext) {
  static constexpr std::array<std::string_view, 4> kDocNames = {"readme", "license", "licence",
                                                                "notice"};
  for (auto n : kDocNames)
    if (StartsWith(base, n)) return Guess{Kind::Doc, false};
  if (ext == "md" || ext == "rst") return Guess{Kind::Doc, false};
  if (ext == "py") return Guess{Kind::Code, false};
  static constexpr std::array<std::string_view, 4> kData = {"parquet", "csv", "tsv", "jsonl"};
  if (OneOf(ext, kData) || ext == "arrow") return Guess{Kind::Dataset, false};
  static constexpr std::array<std::string_view, 16> kCode = {
      "sh",  "ipynb", "js", "ts", "c",    "cc", "cpp", "h",
      "hpp", "cu",    "rs", "go", "java", "rb", "lua", "swift"};
  if (OneOf(ext, kCode) || base == "dockerfile" || base == "makefile")
    return Guess{Kind::Code, true};
  static constexpr std::array<std::string_view, 8> kDocGuess = {"txt",  "pdf", "png", "jpg",
                                                                "jpeg", "gif", "svg", "webp"};
  if (OneOf(ext, kDocGuess)) return Guess{Kind::Doc, true};
  return std::nullopt;
}

Guess ClassifyModelFile(std::string_view base, std::string_view ext, bool lfs) {
  static constexpr std::array<std::string_view, 10> kWeights = {
      "safetensors", "gguf", "onnx", "pt", "pth", "ckpt", "h5", "msgpack", "tflite", "keras"};
  static constexpr std::array<std::string_view, 14> kConfigNames = {"config.json",
                                                                    "generation_config.json",
                                                                    "tokenizer.json",
                                                                    "tokenizer_config.json",
                                                                    "special_tokens_map.json",
                                                                    "preprocessor_config.json",
                                                                    "vocab.json",
                                                                    "vocab.txt",
                                                                    "merges.txt",
                                                                    "tokenizer.model",
                                                                    "added_tokens.json",
                                                                    "chat_template.jinja",
                                                                    "adapter_config.json",
                                                                    "spiece.model"};
  if (OneOf(base, kConfigNames) || EndsWith(base, ".index.json"))
    return {Kind::WeightConfig, false};
  if (OneOf(ext, kWeights)) return {Kind::Weight, false};
  static constexpr std::array<std::string_view, 10> kWeightGuess = {
      "bin", "pb", "npz", "npy", "pkl", "pickle", "joblib", "mlmodel", "ot", "nemo"};
  if (OneOf(ext, kWeightGuess)) return {Kind::Weight, true};
  static constexpr std::array<std::string_view, 7> kConfigGuess = {
      "json", "yaml", "yml", "toml", "model", "tiktoken", "jinja"};
  if (OneOf(ext, kConfigGuess)) return {Kind::WeightConfig, true};
  if (auto g = Common(base, ext)) return *g;
  // Anything else: a large file someone tracked with LFS is most likely weights (Tesseract's
  // .traineddata, extension-less binaries); a small one (.gitattributes) is not.
  return {lfs ? Kind::Weight : Kind::Doc, true};
}

Guess ClassifyDatasetFile(std::string_view base, std::string_view ext) {
  // README, LICENSE, *.md, code and the well-known table formats keep their kind; text,
  // images, json, audio and archives are taken for data, as a guess.
  if (auto g = Common(base, ext); g && (!g->untested || g->kind == Kind::Code)) return *g;
  return {Kind::Dataset, true};
}

// ModelPack's format name for a weight file's extension, with its preference rank.
std::optional<std::pair<int, std::string_view>> FormatOf(std::string_view path) {
  std::string name = AsciiLower(path.substr(path.rfind('/') + 1));
  auto dot = name.rfind('.');
  std::string ext = dot == std::string::npos ? "" : name.substr(dot + 1);
  if (ext == "safetensors") return std::pair{0, "safetensors"};
  if (ext == "gguf") return std::pair{1, "gguf"};
  if (ext == "onnx") return std::pair{2, "onnx"};
  if (ext == "bin" || ext == "pt" || ext == "pth" || ext == "ckpt") return std::pair{3, "pytorch"};
  if (ext == "h5" || ext == "keras" || ext == "pb") return std::pair{4, "tensorflow"};
  if (ext == "msgpack") return std::pair{5, "flax"};
  if (ext == "tflite") return std::pair{6, "tflite"};
  return std::nullopt;
}

// ModelPack precision values (oci.md §11.2).
bool IsPrecision(std::string_view p) {
  static constexpr std::array<std::string_view, 20> kValues = {
      "float32",     "float64",   "float16",   "bfloat16",      "float8_e4m3",
      "float8_e5m2", "complex32", "complex64", "complex128",    "int8",
      "int16",       "int32",     "int64",     "uint8",         "uint16",
      "uint32",      "uint64",    "bool",      "float8_e4m3fn", "float8_e5m2fnuz"};
  return OneOf(p, kValues);
}

std::optional<json::object> ParseObject(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(*text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

std::string StringField(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_string()) return "";
  return std::string(it->value().as_string());
}

json::array Licenses(const std::optional<std::string>& readme) {
  json::array out;
  if (!readme) return out;
  auto card = ParseCardData(*readme);
  if (!card || !*card) return out;
  auto it = (*card)->find("license");
  if (it == (*card)->end()) return out;
  if (it->value().is_string() && !it->value().as_string().empty()) {
    out.emplace_back(it->value().as_string());
  } else if (it->value().is_array()) {
    for (const auto& v : it->value().as_array())
      if (v.is_string() && !v.as_string().empty()) out.emplace_back(v.as_string());
  }
  return out;
}

}  // namespace

std::string_view ArtifactTypeOf(RepoType type) {
  switch (type) {
    case RepoType::Model:
      return kModelArtifactType;
    case RepoType::Dataset:
      return kDatasetArtifactType;
    case RepoType::Space:
      return kSpaceArtifactType;
  }
  return kModelArtifactType;
}

std::string_view ConfigMediaTypeOf(RepoType type) {
  return type == RepoType::Model ? kModelConfigType : kEmptyConfigType;
}

LayerClass ClassifyLayer(RepoType type, std::string_view path, bool lfs) {
  if (type == RepoType::Space) return {std::string(kOrasFileLayerType), false, false};
  std::string base = AsciiLower(path.substr(path.rfind('/') + 1));
  auto dot = base.rfind('.');
  std::string ext = dot == std::string::npos || dot == 0 ? "" : base.substr(dot + 1);
  Guess g =
      type == RepoType::Model ? ClassifyModelFile(base, ext, lfs) : ClassifyDatasetFile(base, ext);
  return {RawType(g.kind), g.untested, g.kind == Kind::Weight};
}

std::string BuildModelConfig(const ModelConfigInput& in) {
  std::optional<json::object> hf_config = ParseObject(in.config_json);

  json::object descriptor;
  descriptor["createdAt"] = in.created_at;
  if (hf_config) {
    if (auto family = StringField(*hf_config, "model_type"); !family.empty())
      descriptor["family"] = family;
  }
  descriptor["name"] = in.name;
  if (!in.doc_url.empty()) descriptor["docURL"] = in.doc_url;
  descriptor["revision"] = in.revision;
  if (json::array licenses = Licenses(in.readme); !licenses.empty())
    descriptor["licenses"] = std::move(licenses);

  json::object config;
  std::optional<std::pair<int, std::string_view>> format;
  for (const auto& p : in.weight_paths) {
    auto f = FormatOf(p);
    if (f && (!format || f->first < format->first)) format = f;
  }
  if (format) config["format"] = format->second;
  if (hf_config) {
    std::string dtype = StringField(*hf_config, "torch_dtype");
    if (dtype.empty()) dtype = StringField(*hf_config, "dtype");
    if (IsPrecision(dtype)) config["precision"] = dtype;
    auto q = hf_config->find("quantization_config");
    if (q != hf_config->end() && q->value().is_object()) {
      if (auto method = StringField(q->value().as_object(), "quant_method"); !method.empty())
        config["quantization"] = method;
    }
  }

  json::array diff_ids;
  for (const auto& d : in.diff_ids) diff_ids.emplace_back(d);
  json::object modelfs;
  modelfs["type"] = "layers";
  modelfs["diffIds"] = std::move(diff_ids);

  json::object root;
  root["descriptor"] = std::move(descriptor);
  root["config"] = std::move(config);
  root["modelfs"] = std::move(modelfs);
  return json::serialize(root);
}

std::string Rfc3339Utc(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace hangar::services

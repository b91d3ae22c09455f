// ViewerService: the Croissant metadata of a dataset's export (viewer_service.h;
// dataset-viewer.md §4.11): JSON-LD describing the Parquet files of refs/convert/parquet
// as file sets, each config as a record set whose fields extract the columns.

#include <algorithm>

#include "core/util.h"
#include "services/viewer/features.h"
#include "services/viewer/viewer_internal.h"

namespace hangar::services::viewer {
namespace json = boost::json;

namespace {

constexpr size_t kMaxConfigs = 100;       // configs described (§4.11)
constexpr size_t kMaxFieldsShort = 1000;  // fields a record set keeps with full=false

// The Croissant dataType of a Value dtype; "" when it has none.
std::string DataType(std::string_view dtype) {
  if (dtype == "string" || dtype == "large_string" || dtype == "binary" || dtype == "large_binary")
    return "sc:Text";
  if (dtype == "bool") return "sc:Boolean";
  if (dtype.starts_with("date")) return "sc:Date";
  if (dtype.starts_with("time64") || dtype.starts_with("time32")) return "sc:Time";
  if (dtype.starts_with("timestamp")) return "sc:DateTime";
  for (std::string_view prefix : {"int", "uint", "float"}) {
    if (!dtype.starts_with(prefix)) continue;
    std::string bits(dtype.substr(prefix.size()));
    std::string name = prefix == "int" ? "Int" : prefix == "uint" ? "UInt" : "Float";
    return "cr:" + name + bits;
  }
  if (dtype.starts_with("decimal")) return "cr:Float64";
  return "";
}

// The field of one column (or sub-field) `name` of `feature` at `id`, reading `source`.
json::object Field(const std::string& id, const std::string& name, const json::value& feature,
                   const json::object& source) {
  json::object field{{"@type", "cr:Field"}, {"@id", id}, {"name", name}};
  const auto* o = feature.if_object();
  if (o && o->contains("_type") && o->at("_type") == "List") {
    field = Field(id, name, o->at("feature"), source);
    field["repeated"] = true;
    return field;
  }
  if (o && !o->contains("_type")) {  // a dict: one sub-field per key
    json::array sub;
    for (const auto& kv : *o) {
      std::string key(kv.key());
      json::object sub_source = source;
      sub_source["transform"] = json::object{{"jsonPath", key}};
      sub.push_back(Field(id + "/" + key, key, kv.value(), sub_source));
    }
    field["subField"] = std::move(sub);
    return field;
  }
  std::string type = o && o->contains("dtype") ? DataType(o->at("dtype").as_string()) : "";
  field["dataType"] = type.empty() ? "sc:Text" : type;
  field["source"] = source;
  return field;
}

// The record sets of one config: its split names, and its rows.
void ConfigRecords(const std::string& dataset, const std::string& config,
                   const std::vector<const db::ViewerSplit*>& splits, bool full,
                   json::array& distribution, json::array& records) {
  std::string files = "parquet-files-for-config-" + config;
  distribution.push_back(json::object{{"@type", "cr:FileSet"},
                                      {"@id", files},
                                      {"containedIn", json::object{{"@id", "repo"}}},
                                      {"encodingFormat", "application/x-parquet"},
                                      {"includes", config + "/*/*.parquet"}});
  std::string split_set = config + "_splits";
  json::array split_names;
  std::string alternatives;
  for (const auto* s : splits) {
    split_names.push_back(json::object{{split_set + "/split_name", s->split}});
    alternatives += (alternatives.empty() ? "" : "|") + s->split;
  }
  records.push_back(json::object{
      {"@type", "cr:RecordSet"},
      {"dataType", "cr:Split"},
      {"@id", split_set},
      {"key", json::object{{"@id", split_set + "/split_name"}}},
      {"field",
       json::array{json::object{
           {"@type", "cr:Field"}, {"@id", split_set + "/split_name"}, {"dataType", "sc:Text"}}}},
      {"data", std::move(split_names)}});
  json::array fields{json::object{
      {"@type", "cr:Field"},
      {"@id", config + "/split"},
      {"dataType", "sc:Text"},
      {"source",
       json::object{{"fileSet", json::object{{"@id", files}}},
                    {"extract", json::object{{"fileProperty", "fullpath"}}},
                    {"transform", json::object{{"regex", config + "/(?:partial-)?(" + alternatives +
                                                             ")/.+parquet$"}}}}},
      {"references", json::object{{"field", json::object{{"@id", split_set + "/split_name"}}}}}}};
  auto columns = ColumnsFromJson(splits.front()->columns_json);
  size_t kept = full ? columns.size() : std::min(columns.size(), kMaxFieldsShort);
  for (size_t i = 0; i < kept; ++i) {
    json::object source{{"fileSet", json::object{{"@id", files}}},
                        {"extract", json::object{{"column", columns[i].name}}}};
    fields.push_back(Field(config + "/" + columns[i].name, columns[i].name,
                           FeatureOf(columns[i].sql_type), source));
  }
  std::string description = dataset + " - '" + config + "' subset";
  if (kept < columns.size())
    description += " (first " + std::to_string(kept) + " columns of " +
                   std::to_string(columns.size()) + "; the others are skipped)";
  records.push_back(json::object{{"@type", "cr:RecordSet"},
                                 {"@id", config},
                                 {"description", description},
                                 {"field", std::move(fields)}});
}

}  // namespace

Result<ViewerAnswer> ViewerService::Croissant(const Principal& who, const RepoId& id, bool full,
                                              const std::string& base_url) {
  HANGAR_ASSIGN_OR_RETURN(auto state, Open(who, id));
  std::string dataset = id.ns + "/" + id.name;
  json::array distribution{
      json::object{{"@type", "cr:FileObject"},
                   {"@id", "repo"},
                   {"name", "repo"},
                   {"description", "The Hangar git repository."},
                   {"contentUrl", base_url + "/datasets/" + PercentEncode(id.ns) + "/" +
                                      PercentEncode(id.name) + "/tree/refs%2Fconvert%2Fparquet"},
                   {"encodingFormat", "git+https"},
                   {"sha256", "https://github.com/mlcommons/croissant/issues/80"}}};
  json::array records;
  size_t described = 0;
  for (const auto& config : ConfigNames(*state)) {
    if (described == kMaxConfigs) break;
    std::vector<const db::ViewerSplit*> splits;
    bool ready = true;
    for (const auto& s : state->splits) {
      if (s.config != config) continue;
      ready &= IsReady(s);
      splits.push_back(&s);
    }
    if (!ready || splits.empty()) continue;  // only what the export holds
    ConfigRecords(dataset, config, splits, full, distribution, records);
    ++described;
  }
  json::object context{{"@language", "en"},
                       {"@vocab", "https://schema.org/"},
                       {"cr", "http://mlcommons.org/croissant/"},
                       {"sc", "https://schema.org/"},
                       {"dct", "http://purl.org/dc/terms/"},
                       {"data", json::object{{"@id", "cr:data"}, {"@type", "@json"}}},
                       {"dataType", json::object{{"@id", "cr:dataType"}, {"@type", "@vocab"}}},
                       {"field", "cr:field"},
                       {"fileProperty", "cr:fileProperty"},
                       {"fileSet", "cr:fileSet"},
                       {"includes", "cr:includes"},
                       {"extract", "cr:extract"},
                       {"transform", "cr:transform"},
                       {"source", "cr:source"},
                       {"subField", "cr:subField"},
                       {"recordSet", "cr:recordSet"},
                       {"references", "cr:references"},
                       {"repeated", "cr:repeated"},
                       {"regex", "cr:regex"},
                       {"jsonPath", "cr:jsonPath"},
                       {"conformsTo", "dct:conformsTo"}};
  json::object out{{"@context", std::move(context)},
                   {"@type", "sc:Dataset"},
                   {"conformsTo", "http://mlcommons.org/croissant/1.1"},
                   {"name", id.name},
                   {"distribution", std::move(distribution)},
                   {"recordSet", std::move(records)}};
  return ViewerAnswer{std::move(out), state->export_row.source_commit};
}

}  // namespace hangar::services::viewer

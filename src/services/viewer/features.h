#pragma once
// The `datasets` library's features (dataset-viewer.md §5, issue 15) of the export's
// columns: each DuckDB type, as Column::sql_type spells it (duckdb/value.h), becomes the
// Feature a datasets client reads — `Value` with its Arrow dtype, `List` (with `length`
// for a fixed-size ARRAY), a dict of sub-features for a STRUCT, `Json` for MAP and UNION.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string_view>
#include <vector>

#include "duckdb/value.h"

namespace hangar::services::viewer {

// The Feature of one column type: "BIGINT" → {"dtype":"int64","_type":"Value"},
// "VARCHAR[]" → {"feature":{…string…},"_type":"List"}, "STRUCT(\"a\" DOUBLE)" →
// {"a":{"dtype":"float64","_type":"Value"}}. A spelling it cannot read (an alias such as
// JSON, a type of a newer engine) is {"dtype":"string","_type":"Value"}: its cells are text.
// Never fails.
boost::json::value FeatureOf(std::string_view sql_type);

// The `features` list of /first-rows, /rows, /search and /filter (§5):
// [{"feature_idx": i, "name": column, "type": Feature}…] in column order.
boost::json::array FeatureList(const std::vector<duckdb::Column>& columns);

// The `features` dict of /info (§4.8): {column: Feature} in column order.
boost::json::object FeatureDict(const std::vector<duckdb::Column>& columns);

// Whether `feature` is, or holds inside lists and dicts, a string Value: the columns a
// full-text search reads (§4.5, "indexable columns").
bool IsIndexable(const boost::json::value& feature);

}  // namespace hangar::services::viewer

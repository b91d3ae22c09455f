#pragma once
// What the MLflow handlers (mlflow_routes.cc) share: a call's parameters, MLflow's paging,
// the records as MLflow messages, and a version's `source`.

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "http/request.h"
#include "services/registry/registry_service.h"

namespace hangar::api::registry {

// The call's parameters as one object: the query string of a GET (a repeated key gives an
// array), the JSON body of anything else ({} when it has none). Errors: BadRequest
// (malformed JSON), PayloadTooLarge.
Result<boost::json::object> Input(http::Request& q);
// A required string parameter; its absence in MLflow's words. Errors: BadRequest.
Result<std::string> Required(const boost::json::object& in, std::string_view key);
// max_results: an integer or its digits in [1, cap], `fallback` when absent.
Result<int64_t> MaxResults(const boost::json::object& in, int64_t fallback, int64_t cap);
// page_token → the offset it stands for (0: none). Errors: BadRequest (not one of ours).
Result<int64_t> PageOffset(const boost::json::object& in);
// Sets next_page_token for `next_offset` (nothing when 0).
void SetNextToken(boost::json::object& out, int64_t next_offset);
// A string or an array of strings, as a list.
Result<std::vector<std::string>> StringsOf(const boost::json::object& in, std::string_view key);
// The RegisteredModel message of `name`, with its latest version per stage.
Result<boost::json::object> RegisteredModel(services::RegistryService& r, const Principal& who,
                                            const std::string& name);
// The ModelVersion message of `name` `version`.
Result<boost::json::object> ModelVersion(services::RegistryService& r, const Principal& who,
                                         const std::string& name, int64_t version);
// A version's `source`: "ns/name[@rev]", optionally after "hf://" and a "models/",
// "datasets/" or "spaces/" collection, or the "mlflow-artifacts:/<collection>/ns/name/<sha>"
// get-download-uri answers. Errors: BadRequest.
Result<services::NewVersion> ParseSource(const std::string& source);

}  // namespace hangar::api::registry

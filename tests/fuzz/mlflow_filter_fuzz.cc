// MLflow's search filter (api::registry::ParseMlflowFilter): any bytes. A filter that
// parses gives at most 20 conditions, each with a field, one of the four operators, and a
// tag key exactly when the field is "tags"; one that does not is a BadRequest.

#include "api/registry/mlflow_filter.h"
#include "fuzz_check.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto conditions = api::registry::ParseMlflowFilter(fuzz::AsText(data, size));
  if (!conditions) {
    FUZZ_CHECK(conditions.error().code == ErrorCode::BadRequest);
    return 0;
  }
  FUZZ_CHECK(conditions->size() <= 20);
  FUZZ_CHECK(size <= 1000);
  for (const auto& c : *conditions) {
    FUZZ_CHECK(!c.field.empty());
    FUZZ_CHECK(c.op == "=" || c.op == "!=" || c.op == "LIKE" || c.op == "ILIKE");
    FUZZ_CHECK((c.field == "tags") == !c.tag.empty());
    FUZZ_CHECK(c.value.size() <= size);
  }
  return 0;
}

// The LFS batch request body (git-lfs.md §11.4; api::lfs::ParseBatch) after the JSON
// parse the handler does: any bytes. A request that parses keeps every object in order.

#include <boost/json.hpp>

#include "api/lfs/lfs_handlers.h"
#include "fuzz_check.h"

using namespace hangar;
namespace json = boost::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boost::system::error_code ec;
  json::value v = json::parse(fuzz::AsText(data, size), ec);
  if (ec || !v.is_object()) return 0;
  const json::object& body = v.get_object();
  auto batch = api::lfs::ParseBatch(body);
  if (!batch) {
    FUZZ_CHECK(batch.error().code == ErrorCode::Unprocessable);
    return 0;
  }
  const json::array& objects = body.at("objects").get_array();
  FUZZ_CHECK(batch->objects.size() == objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    FUZZ_CHECK(batch->objects[i].oid == objects[i].at("oid").get_string());
  }
  FUZZ_CHECK((batch->operation == services::LfsOperation::Upload) ==
             (body.at("operation").get_string() == "upload"));
  return 0;
}

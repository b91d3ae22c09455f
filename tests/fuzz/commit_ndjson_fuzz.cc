// The NDJSON body of the HF commit API (hf-api.md §7.2; api::ParseCommitBody): any bytes
// as a commit body. A body that parses is written back as NDJSON from the parsed
// operations and must parse to the same commit.

#include <boost/json.hpp>

#include "api/hf/commit_body.h"
#include "api/hf/hf_handlers.h"
#include "core/base64.h"
#include "fuzz_check.h"

using namespace hangar;
namespace json = boost::json;
using Kind = services::CommitOperation::Kind;

namespace {

// `input` as an NDJSON commit body, one line per operation.
std::string ToNdjson(const services::CommitInput& input) {
  json::object header{{"summary", input.summary}, {"description", input.description}};
  if (input.parent_commit) header["parentCommit"] = input.parent_commit->Hex();
  std::string out = json::serialize(json::object{{"key", "header"}, {"value", header}});
  for (const auto& op : input.operations) {
    json::object value{{"path", op.path}};
    std::string_view key;
    switch (op.kind) {
      case Kind::File:
        key = "file";
        value["content"] = Base64Encode(op.content);
        value["encoding"] = "base64";
        break;
      case Kind::LfsFile:
        key = "lfsFile";
        value["algo"] = "sha256";
        value["oid"] = op.lfs_oid.Hex();
        if (op.lfs_size) value["size"] = *op.lfs_size;
        break;
      case Kind::CopyFile:
        key = "copyFile";
        value["srcPath"] = op.src_path;
        if (op.src_revision) value["srcRevision"] = *op.src_revision;
        break;
      case Kind::DeletedFile:
        key = "deletedFile";
        break;
      case Kind::DeletedFolder:
        key = "deletedFolder";
        break;
    }
    out += "\n" + json::serialize(json::object{{"key", key}, {"value", std::move(value)}});
  }
  return out + "\n";
}

bool SameOperation(const services::CommitOperation& a, const services::CommitOperation& b) {
  return a.kind == b.kind && a.path == b.path && a.content == b.content && a.lfs_oid == b.lfs_oid &&
         a.lfs_size == b.lfs_size && a.src_path == b.src_path && a.src_revision == b.src_revision;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto input = api::ParseCommitBody(fuzz::AsText(data, size));
  if (!input) {
    FUZZ_CHECK(input.error().code == ErrorCode::BadRequest && !input.error().message.empty());
    return 0;
  }
  auto again = api::ParseCommitBody(ToNdjson(*input));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->summary == input->summary && again->description == input->description);
  FUZZ_CHECK(again->parent_commit == input->parent_commit);
  FUZZ_CHECK(again->operations.size() == input->operations.size());
  for (size_t i = 0; i < input->operations.size(); ++i) {
    // A deletedFolder's trailing '/' is dropped on the first parse already.
    FUZZ_CHECK(SameOperation(again->operations[i], input->operations[i]));
  }
  return 0;
}

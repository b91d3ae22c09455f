// The paths of hub and registry URLs: the revision/path split after /resolve/, /tree/ ...
// (hf-api.md §1.4; api::SplitRevisionAndPath), the /v2/ path split (oci.md §1.5;
// api::oci::ParseOciPath) and registry names (services::ParseOciName). What is split or
// accepted must recombine to the input and keep the name rules.

#include "api/hf/hf_common.h"
#include "api/oci/oci_handlers.h"
#include "core/repo_id.h"
#include "core/repo_path.h"
#include "fuzz_check.h"
#include "services/oci/oci_names.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);

  if (auto split = api::SplitRevisionAndPath(text)) {
    FUZZ_CHECK(!split->revision.empty());
    if (!split->path.empty()) FUZZ_CHECK(ValidateReadPath(split->path).has_value());
  }

  api::oci::OciPath p = api::oci::ParseOciPath(text);
  using api::oci::OciResource;
  switch (p.kind) {
    case OciResource::Base:
      FUZZ_CHECK(text.empty());
      break;
    case OciResource::Catalog:
      FUZZ_CHECK(text == "_catalog");
      break;
    case OciResource::Tags:
      FUZZ_CHECK(p.name + "/tags/list" == text);
      break;
    case OciResource::UploadStart:
      FUZZ_CHECK(p.name + "/blobs/uploads/" == text);
      break;
    case OciResource::Upload:
      FUZZ_CHECK(p.name + "/blobs/uploads/" + p.ref == text);
      break;
    case OciResource::Blob:
      FUZZ_CHECK(p.name + "/blobs/" + p.ref == text);
      break;
    case OciResource::Manifest:
      FUZZ_CHECK(p.name + "/manifests/" + p.ref == text);
      break;
    case OciResource::Referrers:
      FUZZ_CHECK(p.name + "/referrers/" + p.ref == text);
      break;
    case OciResource::Unknown:
      break;
  }
  if (p.kind != OciResource::Unknown && p.kind != OciResource::Base &&
      p.kind != OciResource::Catalog) {
    FUZZ_CHECK(!p.name.empty());
  }

  if (auto name = services::ParseOciName(text)) {
    FUZZ_CHECK(services::MatchesOciNameGrammar(text) && text.size() <= 255);
    // Not every registry name is a valid hub name ("a--b" is one, not the other).
    if (auto id = RepoId::Parse(name->type, name->ns, name->name)) {
      FUZZ_CHECK(services::OciNameOf(*id) == text);
    }
  } else {
    FUZZ_CHECK(name.error().code == ErrorCode::NameInvalid);
  }
  return 0;
}

// The registry's parsers of paths and sources clients send (issue 16): the artifact
// proxy's `<collection>/<ns>/<name>/<commit>[/<path>]` (services::ParseArtifactPath) and a
// model version's MLflow `source` (api::registry::ParseSource), from any bytes. Accepted
// artifact paths name a valid repo, a 40-hex commit and a readable path, and print back to
// a path that parses the same; accepted sources name exactly "ns/name". Refusals are
// BadRequest.

#include "api/registry/mlflow_common.h"
#include "core/repo_path.h"
#include "fuzz_check.h"
#include "services/registry/registry_service.h"

using namespace hangar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  auto ref = services::ParseArtifactPath(text);
  if (!ref) {
    FUZZ_CHECK(ref.error().code == ErrorCode::BadRequest);
  } else {
    FUZZ_CHECK(RepoId::Parse(ref->repo.type, ref->repo.ns, ref->repo.name).has_value());
    FUZZ_CHECK(ref->commit.Hex().size() == 40);
    FUZZ_CHECK(ref->path.empty() || ValidateReadPath(ref->path).has_value());
    FUZZ_CHECK(ref->path.empty() || ref->path.back() != '/');
    std::string again = std::string(RepoCollection(ref->repo.type)) + "/" + ref->repo.Id() + "/" +
                        ref->commit.Hex() + (ref->path.empty() ? "" : "/" + ref->path);
    auto back = services::ParseArtifactPath(again);
    FUZZ_CHECK(back && back->repo == ref->repo && back->commit.Hex() == ref->commit.Hex() &&
               back->path == ref->path);
  }
  auto source = api::registry::ParseSource(std::string(text));
  if (!source) {
    FUZZ_CHECK(source.error().code == ErrorCode::BadRequest);
    return 0;
  }
  FUZZ_CHECK(std::count(source->repo.begin(), source->repo.end(), '/') == 1);
  FUZZ_CHECK(source->repo.size() + source->revision.size() <= size);
  return 0;
}

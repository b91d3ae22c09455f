#include "api/hf/hf_common.h"

#include <vector>

#include "core/repo_path.h"
#include "core/util.h"

namespace hangar::api {

Result<RepoId> RepoFromParams(const http::Request& req, RepoType type) {
  std::string ns = PercentDecode(req.Param("ns"));
  std::string name = PercentDecode(req.Param("name"));
  return RepoId::Parse(type, ns, name);
}

Result<RevisionAndPath> SplitRevisionAndPath(std::string_view raw) {
  std::vector<std::string_view> segs;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t end = raw.find('/', start);
    if (end == std::string_view::npos) end = raw.size();
    segs.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  RevisionAndPath out;
  size_t used = 1;
  auto all_digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (segs.size() >= 3 && segs[0] == "refs" &&
      ((segs[1] == "pr" && all_digits(segs[2])) || (segs[1] == "convert" && !segs[2].empty()))) {
    out.revision = "refs/" + std::string(segs[1]) + "/" + std::string(segs[2]);
    used = 3;
  } else {
    out.revision = PercentDecode(segs[0]);
  }
  if (out.revision.empty()) {
    return MakeError(ErrorCode::RevisionNotFound, "Invalid rev id: (empty)");
  }
  for (size_t i = used; i < segs.size(); ++i) {
    if (i == segs.size() - 1 && segs[i].empty() && i > used) break;  // trailing '/'
    if (i > used) out.path += '/';
    out.path += PercentDecode(segs[i]);
  }
  if (!out.path.empty()) {
    // A decoded segment may itself hold '/' (Python sends tree paths as one segment).
    HANGAR_TRY(ValidateReadPath(out.path));
  }
  return out;
}

}  // namespace hangar::api

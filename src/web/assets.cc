#include "web/assets.h"

#include <utility>

namespace hangar::web {
namespace generated {
extern const std::pair<std::string_view, std::string_view> kAssets[];
}

std::optional<std::string_view> Asset(std::string_view path) {
  for (auto* a = generated::kAssets; !a->first.empty(); ++a) {
    if (a->first == path) return a->second;
  }
  return std::nullopt;
}

std::string_view ContentTypeFor(std::string_view path) {
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  if (path.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".svg")) return "image/svg+xml";
  if (path.ends_with(".png")) return "image/png";
  if (path.ends_with(".ico")) return "image/x-icon";
  return "application/octet-stream";
}

}  // namespace hangar::web

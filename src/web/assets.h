#pragma once
// Files compiled into the binary from src/web/templates and src/web/static.

#include <optional>
#include <string_view>

namespace hangar::web {

// The bytes of asset `path` ("templates/layout.mustache", "static/hangar.css"), or nullopt.
// The view is valid for the life of the process.
std::optional<std::string_view> Asset(std::string_view path);

// A Content-Type for a static file, from its extension ("text/css; charset=utf-8", ...).
std::string_view ContentTypeFor(std::string_view path);

}  // namespace hangar::web

#pragma once
// Views: Mustache templates (kainjow, libkainjow-mustache-dev) compiled into the binary
// from src/web/templates. `{{x}}` is HTML-escaped; `{{{x}}}` only ever receives HTML that
// Hangar built itself (markdown through the sanitizer, highlighted diffs).

#include <string>
#include <string_view>

#include <kainjow/mustache.hpp>

#include "core/result.h"

namespace hangar::web {

using Data = kainjow::mustache::data;
using List = kainjow::mustache::list;

// Renders templates/<name>.mustache with `data`. Templates whose name starts with '_'
// are partials, usable everywhere as {{> _name}} (they are added to `data`). Templates
// are parsed once per thread. Errors: Internal when the template is missing or malformed.
Result<std::string> RenderTemplate(std::string_view name, Data& data);

}  // namespace hangar::web

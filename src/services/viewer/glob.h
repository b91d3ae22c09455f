#pragma once
// Glob patterns over repo paths, as the `datasets` library matches data files
// (dataset-viewer.md §7.2): `*` matches within one path component, `**` as a whole
// component matches any number of components (none included), `?` one character, `[…]` a
// class (`[!…]` or `[^…]` negated, ranges `a-z`), `{a,b}` alternatives. Case-sensitive.

#include <string_view>

namespace hangar::services::viewer {

// Whether `path` ("data/train/0.csv", no leading '/') matches `pattern`. A malformed
// pattern (an unclosed `[` or `{`) matches its bad part literally. Braces nest; a pattern
// naming more than 256 alternatives in all matches nothing (a bound on the work).
bool GlobMatch(std::string_view pattern, std::string_view path);

}  // namespace hangar::services::viewer

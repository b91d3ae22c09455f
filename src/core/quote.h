#pragma once
// Quoting text into a language that escapes its quote by doubling it.

#include <string>
#include <string_view>

namespace hangar {

// `s` between two `quote` characters, each `quote` inside it doubled: an SQL string literal
// (quote '\''), an FTS5 phrase (quote '"').
std::string QuoteDoubled(std::string_view s, char quote);

}  // namespace hangar

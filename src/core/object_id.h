#pragma once
// Object ids as the public hub shows them in `_id` and `id` fields (hf-api.md §1.12): 24
// lower-case hex characters. Hangar's are a kind character and a row id in 23 hex digits,
// so an id names one row of one table and is read back without a lookup.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hangar {

// The id of row `id` of kind `kind` ('6' users and repos, '7' orgs, 'e' discussion
// events, 'd' discussions).
std::string ObjectId(int64_t id, char kind);

// The row id ObjectId(id, kind) made, back; none for any other text.
std::optional<int64_t> ParseObjectId(std::string_view text, char kind);

}  // namespace hangar

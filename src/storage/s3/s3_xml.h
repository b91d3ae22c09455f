#pragma once
// The few parts of S3's XML responses S3BlobStore reads: the text of named elements.
// Not a general XML parser: S3's response documents have no attributes on the elements
// read here, no CDATA and no nesting of an element inside one of the same name.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hangar::storage::s3xml {

// The inner text of every <name>...</name> in `xml`, in order (raw, entities kept).
std::vector<std::string_view> Elements(std::string_view xml, std::string_view name);

// The unescaped text of the first <name> in `xml`, or nullopt.
std::optional<std::string> Text(std::string_view xml, std::string_view name);

// `s` with the five predefined entities and numeric character references decoded.
std::string Unescape(std::string_view s);

// `s` with & < > " ' escaped and NUL (which XML cannot carry) dropped, for request bodies.
std::string Escape(std::string_view s);

}  // namespace hangar::storage::s3xml

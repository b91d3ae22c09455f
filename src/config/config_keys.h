#pragma once
// Internal to config/: the table of every configuration key, and how each one is parsed,
// checked and printed. One row per key; docs/config.md lists the same keys in this order.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"

namespace hangar::config::internal {

// A value as a source gives it: TOML has types, environment and flags only strings.
using RawValue = std::variant<std::string, int64_t, bool>;

struct KeyDef {
  std::string_view section;  // "server"
  std::string_view name;     // "listen"
  // Parses `v` into the field. Returns a problem ("expected an integer, got 'x'") or "".
  std::function<std::string(Config&, const RawValue& v)> set;
  // The field's problem under its own rules (range, choices), or "".
  std::function<std::string(const Config&)> check;
  // The field as a TOML value literal.
  std::function<std::string(const Config&)> to_toml;

  std::string FullName() const;  // "server.listen"
  std::string EnvName() const;   // "HANGAR_SERVER_LISTEN"
};

// Every key, in documentation order.
std::span<const KeyDef> Keys();

// The row for "section.name", or nullptr.
const KeyDef* FindKey(std::string_view full_name);

// A TOML basic string literal for `s`, quotes included.
std::string TomlQuote(std::string_view s);

}  // namespace hangar::config::internal

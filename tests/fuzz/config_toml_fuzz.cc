// The TOML config (src/config; config::LoadConfig) from arbitrary text, with no
// environment: a config that loads must print (ToToml) as TOML that loads to the same
// config. Also the flag forms: ParseOverride then SetKey, and ParseListen.

#include "config/config.h"
#include "fuzz_check.h"

using namespace hangar;

namespace {

std::optional<std::string> NoEnv(const std::string&) { return std::nullopt; }

Result<config::Config> Load(std::string_view toml) {
  config::LoadOptions options;
  options.config_toml = std::string(toml);
  options.getenv = NoEnv;
  return config::LoadConfig(options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  if (auto config = Load(text)) {
    std::string printed = config::ToToml(*config);
    auto again = Load(printed);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(config::ToToml(*again) == printed);
  } else {
    FUZZ_CHECK(config.error().code == ErrorCode::BadRequest);
  }

  if (auto flag = config::ParseOverride(text)) {
    FUZZ_CHECK(flag->first + "=" + flag->second == text);
    config::Config c;
    if (config::SetKey(c, flag->first, flag->second)) {
      auto again = Load(config::ToToml(c));
      FUZZ_CHECK(again.has_value());
    }
  }
  if (auto listen = config::ParseListen(text)) {
    FUZZ_CHECK(!listen->first.empty() && text.find(listen->first) != std::string_view::npos);
  }
  return 0;
}

#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace hangar {

std::shared_ptr<spdlog::logger> Log(const std::string& name) {
  if (auto existing = spdlog::get(name)) return existing;
  try {
    auto logger = spdlog::stderr_color_mt(name);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ [%n] %v", spdlog::pattern_time_type::utc);
    return logger;
  } catch (const spdlog::spdlog_ex&) {
    return spdlog::get(name);  // created concurrently by another thread
  }
}

void SetLogLevel(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace hangar

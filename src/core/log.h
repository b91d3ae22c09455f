#pragma once
// Named spdlog loggers, one per folder (STYLE.md §6): Log("http"), Log("git"), ...

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace hangar {

// The logger called `name`, created on first use; writes to stderr. Thread-safe.
std::shared_ptr<spdlog::logger> Log(const std::string& name);

// Sets the level of all loggers ("trace" … "off"); unknown names mean "info".
void SetLogLevel(const std::string& level);

}  // namespace hangar

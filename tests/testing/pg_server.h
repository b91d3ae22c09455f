#pragma once
// Test helper: a real PostgreSQL server on 127.0.0.1, a throw-away cluster that
// scripts/pg-server.sh starts in a temporary directory (~1 s) for this process and that
// stops when the process ends. HANGAR_TEST_PG_URL, when set, names a server to use instead.

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "testing/subprocess.h"

#ifndef HANGAR_PG_SERVER_SCRIPT
#error "HANGAR_PG_SERVER_SCRIPT must name scripts/pg-server.sh"
#endif

namespace hangar::testing {

class PgServer {
 public:
  // The process-wide server; nullptr with `*error` set when it cannot be had.
  static PgServer* Shared(std::string* error) {
    static std::string start_error;
    static std::unique_ptr<PgServer> server = Open(&start_error);
    if (!server && error != nullptr) *error = start_error;
    return server.get();
  }

  ~PgServer() {
    if (own_dir_.empty()) return;
    ChildProcess stop;
    if (stop.Start({HANGAR_PG_SERVER_SCRIPT, "stop", own_dir_})) {
      for (int i = 0; i < 600 && !stop.Exited(); ++i) ::usleep(50 * 1000);
    }
    std::error_code ec;
    std::filesystem::remove_all(own_dir_, ec);
  }

  // postgresql://hangar:PASSWORD@127.0.0.1:PORT/hangar
  const std::string& url() const { return url_; }

 private:
  PgServer() = default;

  static std::unique_ptr<PgServer> Open(std::string* error) {
    auto s = std::unique_ptr<PgServer>(new PgServer());
    if (const char* env = std::getenv("HANGAR_TEST_PG_URL"); env != nullptr && *env != '\0') {
      s->url_ = env;
      return s;
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "hangar-pg.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      *error = "mkdtemp failed";
      return nullptr;
    }
    ChildProcess start;
    if (!start.Start({HANGAR_PG_SERVER_SCRIPT, "start", tmpl, "--no-fsync", "--watch",
                      std::to_string(::getpid())})) {
      *error = "cannot run " HANGAR_PG_SERVER_SCRIPT;
      return nullptr;
    }
    while (auto line = start.ReadLine(std::chrono::seconds(90))) {
      if (line->starts_with("PG_URL=")) s->url_ = line->substr(7);
    }
    for (int i = 0; i < 100 && !start.Exited(); ++i) ::usleep(50 * 1000);
    s->own_dir_ = tmpl;
    if (s->url_.empty()) {
      *error =
          HANGAR_PG_SERVER_SCRIPT " start did not bring up PostgreSQL (its messages are above)";
      return nullptr;  // the destructor stops whatever did start and removes the directory
    }
    return s;
  }

  std::string url_;
  std::string own_dir_;  // set when this process started the server
};

}  // namespace hangar::testing

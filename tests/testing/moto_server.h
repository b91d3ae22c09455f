#pragma once
// Test helper: a moto S3 server (`moto_server`, python moto) on 127.0.0.1, started by the
// test binary itself and stopped at exit. Tests that need S3 call MotoServer::Shared().
// moto accepts any credentials and does not check signatures; it is an API double.

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "testing/subprocess.h"

namespace hangar::testing {

class MotoServer {
 public:
  // The process-wide server, started on first call; nullptr with `*error` set when
  // moto_server is missing or does not come up. Stopped when the process exits.
  static MotoServer* Shared(std::string* error) {
    static std::string start_error;
    static std::unique_ptr<MotoServer> server = Start(&start_error);
    if (!server && error != nullptr) *error = start_error;
    return server.get();
  }

  // Starts a new server on a free port; waits up to 60 s for it to accept connections.
  static std::unique_ptr<MotoServer> Start(std::string* error) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      int port = FreeLocalPort();
      auto s = std::unique_ptr<MotoServer>(new MotoServer(port));
      if (!s->child_.Start({"moto_server", "-H", "127.0.0.1", "-p", std::to_string(port)})) {
        *error = "cannot start moto_server (fork failed)";
        return nullptr;
      }
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (std::chrono::steady_clock::now() < deadline) {
        if (PortAccepts(port)) return s;
        if (s->child_.Exited()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!s->child_.Exited()) {
        *error = "moto_server did not accept connections on port " + std::to_string(port) +
                 " within 60 s";
        return nullptr;
      }
      // Exited: missing from PATH (status 127), or the port was taken meanwhile: retry.
    }
    *error =
        "moto_server is not on PATH or exits at once: the S3 tests need it "
        "(pip install 'moto[server]')";
    return nullptr;
  }

  // "http://127.0.0.1:<port>"
  std::string Endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  explicit MotoServer(int port) : port_(port) {}
  int port_;
  ChildProcess child_;
};

}  // namespace hangar::testing

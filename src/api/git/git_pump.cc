#include "api/git/git_pump.h"

#include <thread>
#include <vector>

namespace hangar::api {

Result<int> PumpGit(services::GitConnection& conn, GitTransport& transport) {
  git::Process& git = conn.process();
  std::thread feeder([&] {
    std::vector<char> buf(64 << 10);
    while (true) {
      auto n = transport.ReadIn(buf);
      if (!n) {
        git.Kill();  // the client is gone mid-conversation: git must not act on half of it
        return;
      }
      if (*n == 0) break;
      // git closed its stdin (it is done, or failed and says so on stdout): stop feeding.
      if (!git.WriteStdin(std::span<const char>(buf.data(), *n))) return;
    }
    git.CloseStdin();
  });
  std::vector<char> buf(64 << 10);
  while (true) {
    auto n = git.ReadStdout(buf);
    if (!n || *n == 0) break;
    if (!transport.WriteOut(std::string_view(buf.data(), *n))) {
      git.Kill();
      break;
    }
  }
  // git's output ended: it exited or is about to. The feeder may be waiting for client
  // bytes that will never come.
  transport.StopReading();
  feeder.join();
  return conn.Finish();
}

}  // namespace hangar::api

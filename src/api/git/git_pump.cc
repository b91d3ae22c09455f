#include "api/git/git_pump.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"

namespace hangar::api {

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<int> PumpGit(services::GitConnection& conn, GitTransport& transport,
                    std::chrono::milliseconds idle_timeout) {
  git::Process& git = conn.process();
  std::atomic<int64_t> last_move{NowMs()};

  // Ends a conversation in which nothing moved for idle_timeout.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    const auto tick =
        std::min<std::chrono::milliseconds>(idle_timeout / 4, std::chrono::seconds(1));
    std::unique_lock lock(mu);
    while (!cv.wait_for(lock, tick, [&] { return done; })) {
      if (NowMs() - last_move.load() >= idle_timeout.count()) {
        Log("git")->info("git session idle for {} ms: cut off", idle_timeout.count());
        git.Kill();
        transport.Abort();
        return;
      }
    }
  });

  std::thread feeder([&] {
    std::vector<char> buf(64 << 10);
    while (true) {
      auto n = transport.ReadIn(buf);
      if (!n) {
        git.Kill();  // the client is gone mid-conversation: git must not act on half of it
        return;
      }
      if (*n == 0) break;
      last_move = NowMs();
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
    last_move = NowMs();
  }
  // git's output ended: it exited or is about to. The feeder may be waiting for client
  // bytes that will never come.
  transport.StopReading();
  feeder.join();
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  return conn.Finish();
}

}  // namespace hangar::api

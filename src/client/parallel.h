#pragma once
// RunParallel: `count` tasks on `workers` threads, stopping at the first failure.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/result.h"

namespace hangar::client {

// Runs task(0) … task(count - 1), each once, on min(workers, count) threads (the caller's
// thread is one of them), in index order of starting. After the first error no new task
// starts; that error is returned once the running ones end.
inline Result<void> RunParallel(size_t count, int workers,
                                const std::function<Result<void>(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::optional<Error> first;
  auto run = [&] {
    for (;;) {
      if (failed.load()) return;
      size_t i = next.fetch_add(1);
      if (i >= count) return;
      auto r = task(i);
      if (!r) {
        std::lock_guard lock(mu);
        if (!first) first = std::move(r).error();
        failed.store(true);
        return;
      }
    }
  };
  size_t n = std::min<size_t>(count, static_cast<size_t>(std::max(1, workers)));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(run);
  run();
  for (auto& t : threads) t.join();
  if (first) return *first;
  return {};
}

// Retries `attempt` (up to `tries` times in all) while it fails with an error `retryable`
// accepts, sleeping 0.5 s, 1 s, 2 s … between tries.
inline Result<void> WithRetries(int tries, const std::function<bool(const Error&)>& retryable,
                                const std::function<Result<void>()>& attempt) {
  auto delay = std::chrono::milliseconds(500);
  for (int i = 1;; ++i) {
    auto r = attempt();
    if (r || i >= tries || !retryable(r.error())) return r;
    std::this_thread::sleep_for(delay);
    delay *= 2;
  }
}

}  // namespace hangar::client

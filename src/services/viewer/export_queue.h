#pragma once
// ExportQueue: the in-process queue of export jobs (issue 15 point 2): repo ids waiting to be
// exported, run one at a time per repo by a few threads of its own. A repo enqueued again
// while its job runs cancels that job (a newer push supersedes it) and runs once more
// after it; enqueued again while waiting, it still runs once.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace hangar::services::viewer {

class ExportQueue {
 public:
  // Runs `run(repo_id, cancel)` on `workers` threads (at least 1). `run` must return soon
  // after `cancel` is set.
  using Run = std::function<void(int64_t repo_id, const std::atomic<bool>& cancel)>;
  ExportQueue(Run run, int workers);
  // Cancels the running jobs, drops the waiting ones and joins the threads.
  ~ExportQueue();
  ExportQueue(const ExportQueue&) = delete;
  ExportQueue& operator=(const ExportQueue&) = delete;

  // Queues an export of `repo_id`. With `supersede` (a push), a running job of the repo is
  // cancelled and runs again; without (a reader found the export stale), a repo already
  // queued or running is left as it is.
  void Enqueue(int64_t repo_id, bool supersede = true);
  // Blocks until nothing is queued or running (tests, shutdown of a CLI command).
  void WaitIdle();

 private:
  void Work();

  Run run_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<int64_t> waiting_;
  std::set<int64_t> queued_;                                       // the ids in waiting_
  std::map<int64_t, std::shared_ptr<std::atomic<bool>>> running_;  // id -> its cancel flag
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace hangar::services::viewer

// The in-process export queue (export_queue.h).

#include "services/viewer/export_queue.h"

#include <algorithm>

namespace hangar::services::viewer {

ExportQueue::ExportQueue(Run run, int workers) : run_(std::move(run)) {
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { Work(); });
}

ExportQueue::~ExportQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, cancel] : running_) cancel->store(true);
    waiting_.clear();
    queued_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ExportQueue::Enqueue(int64_t repo_id, bool supersede) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (auto it = running_.find(repo_id); it != running_.end()) {
      if (!supersede) return;
      it->second->store(true);
    }
    if (!queued_.insert(repo_id).second) return;
    waiting_.push_back(repo_id);
  }
  wake_.notify_one();
}

void ExportQueue::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return stopping_ || (waiting_.empty() && running_.empty()); });
}

void ExportQueue::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    // The first waiting repo whose job is not running: one job per repo at a time.
    auto next = waiting_.end();
    wake_.wait(lock, [&] {
      next = std::find_if(waiting_.begin(), waiting_.end(),
                          [&](int64_t id) { return !running_.contains(id); });
      return stopping_ || next != waiting_.end();
    });
    if (stopping_) return;
    int64_t id = *next;
    waiting_.erase(next);
    queued_.erase(id);
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    running_.emplace(id, cancel);
    lock.unlock();
    run_(id, *cancel);
    lock.lock();
    running_.erase(id);
    wake_.notify_all();  // a waiting re-run of this repo may start now
    if (waiting_.empty() && running_.empty()) idle_.notify_all();
  }
}

}  // namespace hangar::services::viewer

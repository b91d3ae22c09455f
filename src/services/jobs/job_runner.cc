#include "services/jobs/job_runner.h"

#include <algorithm>
#include <random>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {
namespace {

// The change feed's topic of jobs queued (key: the kind).
constexpr std::string_view kJobTopic = "job";

}  // namespace

JobRunner::JobRunner(db::JobStore& store, JobRunnerOptions options)
    : store_(store), options_(std::move(options)), process_(RandomHex(6)) {
  if (!options_.now_ms) options_.now_ms = NowUnixMillis;
  options_.threads = std::max(1, options_.threads);
  options_.lease_ms = std::max<int64_t>(options_.lease_ms, 300);
}

JobRunner::~JobRunner() { Stop(); }

void JobRunner::Handle(std::string kind, JobHandler handler) {
  kinds_.push_back(kind);
  handlers_[std::move(kind)] = std::move(handler);
}

void JobRunner::Every(PeriodicJob job) { periodic_.push_back(std::move(job)); }

void JobRunner::Start() {
  if (started_) return;
  started_ = true;
  if (options_.changes) {
    heard_ = options_.changes->Subscribe(std::string(kJobTopic), [this](std::string_view) {
      // Under the feed's lock: only a quick notify.
      Wake();
    });
  }
  idle_at_.assign(static_cast<size_t>(options_.threads), kBusy);
  for (size_t i = 0; i < idle_at_.size(); ++i) {
    threads_.emplace_back([this, i](std::stop_token stop) { Work(i, stop); });
  }
  threads_.emplace_back([this](std::stop_token stop) { Keep(stop); });
}

void JobRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    for (Running* r : running_) r->stop.request_stop();
  }
  heard_ = {};
  for (auto& t : threads_) t.request_stop();
  wake_.notify_all();
  threads_.clear();  // joins
}

void JobRunner::Wake() {
  {
    std::lock_guard lock(mu_);
    ++wakes_;
  }
  wake_.notify_all();
}

Result<int64_t> JobRunner::Enqueue(db::NewJob job) {
  if (job.run_at == 0) job.run_at = Now();
  HANGAR_ASSIGN_OR_RETURN(int64_t id, store_.Enqueue(job, Now()));
  Wake();
  if (options_.changes) options_.changes->Publish(kJobTopic, job.kind);
  return id;
}

Result<void> JobRunner::Retry(int64_t id) {
  HANGAR_TRY(store_.Retry(id, Now()));
  Wake();
  if (options_.changes) options_.changes->Publish(kJobTopic, "");
  return {};
}

bool JobRunner::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return idle_.wait_for(lock, timeout, [this] {
    return running_.empty() && std::all_of(idle_at_.begin(), idle_at_.end(),
                                           [this](uint64_t at) { return at == wakes_; });
  });
}

int64_t JobRunner::BackOff(int attempts) const {
  thread_local std::minstd_rand random(std::random_device{}());
  int shift = std::clamp(attempts - 1, 0, 30);
  int64_t delay = std::min(options_.retry_max_ms, options_.retry_base_ms << shift);
  // ±25 %: processes that failed together do not retry together.
  int64_t spread = delay / 2;
  return delay - spread / 2 + (spread > 0 ? static_cast<int64_t>(random() % spread) : 0);
}

void JobRunner::Work(size_t index, std::stop_token stop) {
  while (!stop.stop_requested()) {
    uint64_t seen;
    std::string claim;
    {
      std::lock_guard lock(mu_);
      seen = wakes_;
      idle_at_[index] = kBusy;
      claim = process_ + "-" + std::to_string(next_claim_++);
    }
    auto job = store_.Claim(kinds_, claim, options_.lease_ms, Now());
    if (!job) Log("jobs")->warn("claiming a job failed: {}", job.error().message);
    if (job && *job) {
      Running running{(*job)->id, claim, {}};
      {
        std::lock_guard lock(mu_);
        running_.push_back(&running);
      }
      // The process's stop reaches the handler through the job's own stop source.
      std::stop_callback forward(stop, [&running] { running.stop.request_stop(); });
      Run(**job, running.stop, stop);
      {
        std::lock_guard lock(mu_);
        std::erase(running_, &running);
        ++wakes_;  // a finished job may have queued another (a retry, a follow-up)
      }
      continue;
    }
    std::unique_lock lock(mu_);
    if (job) idle_at_[index] = seen;  // nothing due as of `seen`
    idle_.notify_all();
    wake_.wait_for(lock, stop, std::chrono::milliseconds(options_.poll_ms),
                   [&] { return wakes_ != seen; });
  }
}

void JobRunner::Run(const db::JobRecord& job, std::stop_source& job_stop,
                    std::stop_token process_stop) {
  auto handler = handlers_.find(job.kind);
  Result<void> outcome =
      handler == handlers_.end()
          ? Result<void>(MakeError(ErrorCode::Internal, "no handler for job kind " + job.kind))
          : [&]() -> Result<void> {
    try {
      return handler->second(job, job_stop.get_token());
    } catch (const std::exception& e) {
      return MakeError(ErrorCode::Internal, std::string("job threw: ") + e.what());
    }
  }();
  if (job_stop.stop_requested()) {
    // The process's stop is requested before its callbacks reach the job's.
    if (process_stop.stop_requested()) {
      // Handed back at once (as a failed attempt), not left to its lease: another process
      // takes it now. A lost claim is not ours to record.
      auto back =
          store_.Fail(job.id, job.claim, "its process stopped during the run", Now(), Now());
      Log("jobs")->info("job {} ({}) stopped with its process; {}", job.id, job.kind,
                        back ? "queued again" : back.error().message);
    }
    return;
  }
  if (outcome) {
    if (auto done = store_.Complete(job.id, job.claim, Now()); !done) {
      Log("jobs")->warn("job {} ({}) ran, but: {}", job.id, job.kind, done.error().message);
    }
    return;
  }
  auto state =
      store_.Fail(job.id, job.claim, outcome.error().message, Now() + BackOff(job.attempts), Now());
  if (!state) {
    Log("jobs")->warn("job {} ({}) failed ({}), and recording it failed: {}", job.id, job.kind,
                      outcome.error().message, state.error().message);
  } else if (*state == db::JobState::Dead) {
    Log("jobs")->error("job {} ({}) is dead after {} attempts: {}", job.id, job.kind, job.attempts,
                       outcome.error().message);
  } else {
    Log("jobs")->warn("job {} ({}) failed (attempt {} of {}): {}", job.id, job.kind, job.attempts,
                      job.max_attempts, outcome.error().message);
  }
}

void JobRunner::Keep(std::stop_token stop) {
  const int64_t tick_ms = std::clamp<int64_t>(options_.lease_ms / 3, 100, 1000);
  const int64_t started = Now();
  int64_t next_renew = started + options_.lease_ms / 3;
  int64_t next_sweep = started;
  std::vector<int64_t> next_ask(periodic_.size(), 0);
  std::mutex sleep_mu;
  std::condition_variable_any sleep_cv;
  while (!stop.stop_requested()) {
    int64_t now = Now();
    if (now >= next_renew) {
      next_renew = now + options_.lease_ms / 3;
      std::vector<Running> held;  // copies: the store is not called under mu_
      {
        std::lock_guard lock(mu_);
        for (Running* r : running_) held.push_back(*r);
      }
      for (Running& r : held) {
        auto renewed = store_.Renew(r.id, r.claim, options_.lease_ms, now);
        if (!renewed && renewed.error().code == ErrorCode::Conflict) {
          Log("jobs")->warn("job {}: {}; stopping it here", r.id, renewed.error().message);
          r.stop.request_stop();  // shares the running job's stop state
        }
      }
    }
    for (size_t i = 0; i < periodic_.size(); ++i) {
      const PeriodicJob& p = periodic_[i];
      // Asked at most every 5 s (or its interval): each ask is a write.
      if (now < started + p.first_delay_ms || now < next_ask[i]) continue;
      next_ask[i] = now + std::min<int64_t>(p.interval_ms, 5000);
      auto mine = store_.TakeTick(p.kind, p.interval_ms, now);
      if (mine && *mine) {
        db::NewJob job{p.kind, p.kind, p.payload, p.max_attempts, now};
        if (auto queued = Enqueue(std::move(job)); !queued) {
          Log("jobs")->warn("queueing periodic job {} failed: {}", p.kind, queued.error().message);
        }
      }
    }
    if (now >= next_sweep) {
      next_sweep = now + 3600000;
      if (auto gone = store_.DeleteDone(now - options_.keep_done_ms); gone && *gone > 0) {
        Log("jobs")->info("deleted {} finished jobs older than {} s", *gone,
                          options_.keep_done_ms / 1000);
      }
    }
    std::unique_lock lock(sleep_mu);
    sleep_cv.wait_for(lock, stop, std::chrono::milliseconds(tick_ms), [] { return false; });
  }
}

}  // namespace hangar::services

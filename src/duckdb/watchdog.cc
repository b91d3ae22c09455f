#include "duckdb/watchdog.h"

namespace hangar::duckdb::internal {

Watchdog::Watchdog() : thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t Watchdog::Arm(duckdb_connection connection, Clock::time_point deadline) {
  uint64_t ticket;
  {
    std::lock_guard lock(mu_);
    ticket = next_ticket_++;
    armed_.emplace(ticket, Armed{connection, deadline});
  }
  wake_.notify_all();  // it may be the earliest deadline now
  return ticket;
}

bool Watchdog::Disarm(uint64_t ticket) {
  // Under mu_, as the interrupts are sent: once this returns, none comes for the ticket,
  // so the connection may serve the next query.
  std::lock_guard lock(mu_);
  auto it = armed_.find(ticket);
  if (it == armed_.end()) return false;
  bool fired = it->second.fired;
  armed_.erase(it);
  return fired;
}

void Watchdog::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    Clock::time_point now = Clock::now();
    Clock::time_point earliest = Clock::time_point::max();
    // A handful of entries (one per running query): a scan beats an ordered index.
    for (auto& [ticket, a] : armed_) {
      if (a.next <= now) {
        duckdb_interrupt(a.connection);  // sets a flag; never blocks
        a.fired = true;
        a.next = now + kRefire;
      }
      earliest = std::min(earliest, a.next);
    }
    if (earliest == Clock::time_point::max())
      wake_.wait(lock);
    else
      wake_.wait_until(lock, earliest);
  }
}

}  // namespace hangar::duckdb::internal

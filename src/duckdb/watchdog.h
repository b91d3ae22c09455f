#pragma once
// Internal to src/duckdb: the thread that interrupts queries past their deadline.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

#include "duckdb/internal.h"

namespace hangar::duckdb::internal {

// One thread that calls duckdb_interrupt on each armed connection once its deadline has
// passed, and again every kRefire until it is disarmed: DuckDB clears a connection's
// interrupt flag when a statement starts, so an interrupt that lands just before that
// would otherwise be lost. Thread-safe. Destroying it joins the thread; disarm every
// ticket first.
class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kRefire{20};

  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts watching `connection` (it must outlive the ticket) for `deadline`.
  uint64_t Arm(duckdb_connection connection, Clock::time_point deadline);
  // Stops watching; no interrupt for this ticket comes after it returns. True when it had
  // interrupted the connection at least once.
  bool Disarm(uint64_t ticket);

 private:
  struct Armed {
    duckdb_connection connection;
    Clock::time_point next;  // when to interrupt (again)
    bool fired = false;
  };
  void Loop();

  std::mutex mu_;  // guards armed_, next_ticket_, stop_; with wake_
  std::condition_variable wake_;
  std::map<uint64_t, Armed> armed_;
  uint64_t next_ticket_ = 1;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace hangar::duckdb::internal

#pragma once
// Internal to src/duckdb: the connections of one database, lent to one query at a time.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "duckdb/internal.h"

namespace hangar::duckdb::internal {

// Up to `max` connections of `db`, opened when first needed and kept. A DuckDB connection
// serves one statement at a time; the database behind them is shared and thread-safe.
// Thread-safe. Destroy it after every Lease has gone, before the database closes.
class ConnectionPool {
 public:
  using Clock = std::chrono::steady_clock;

  ConnectionPool(duckdb_database db, int max) : db_(db), max_(max) {}
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // One connection, given back to the pool when the Lease goes.
  class Lease {
   public:
    Lease(ConnectionPool* pool, ConnectionHandle c) : pool_(pool), c_(std::move(c)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (c_) pool_->Give(std::move(c_));
    }
    duckdb_connection get() const { return c_.get(); }

   private:
    ConnectionPool* pool_;
    ConnectionHandle c_;
  };

  // A free connection, waiting for one until `deadline`. Errors: Unavailable when none
  // came free in time, Internal when DuckDB cannot open one.
  Result<Lease> Acquire(Clock::time_point deadline);

 private:
  void Give(ConnectionHandle c);

  const duckdb_database db_;
  const int max_;
  std::mutex mu_;  // guards idle_ and opened_; with freed_
  std::condition_variable freed_;
  std::vector<ConnectionHandle> idle_;
  int opened_ = 0;  // idle or lent
};

}  // namespace hangar::duckdb::internal

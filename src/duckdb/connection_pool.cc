#include "duckdb/connection_pool.h"

#include <string>

namespace hangar::duckdb::internal {

Result<ConnectionPool::Lease> ConnectionPool::Acquire(Clock::time_point deadline) {
  {
    std::unique_lock lock(mu_);
    while (idle_.empty() && opened_ >= max_) {
      if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
          opened_ >= max_) {
        return MakeError(ErrorCode::Unavailable,
                         "query took too long: all " + std::to_string(max_) +
                             " DuckDB connections stayed busy until its deadline");
      }
    }
    if (!idle_.empty()) {
      ConnectionHandle c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(c));
    }
    ++opened_;  // reserved; opened below, outside the lock
  }
  ConnectionHandle c;
  if (duckdb_connect(db_, c.out()) != DuckDBSuccess) {
    {
      std::lock_guard lock(mu_);
      --opened_;
    }
    freed_.notify_one();
    return MakeError(ErrorCode::Internal, "DuckDB: cannot open a connection");
  }
  return Lease(this, std::move(c));
}

void ConnectionPool::Give(ConnectionHandle c) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(c));
  }
  freed_.notify_one();
}

}  // namespace hangar::duckdb::internal

#pragma once
// Internal to src/duckdb: what an Engine holds (engine_open.cc builds it, engine.cc runs
// queries on it).

#include "duckdb/connection_pool.h"
#include "duckdb/engine.h"
#include "duckdb/internal.h"
#include "duckdb/watchdog.h"

namespace hangar::duckdb {

// Members in the order they must be torn down in reverse: the watchdog (its thread) first,
// then the pooled connections, then the database.
class Engine::State {
 public:
  State(EngineOptions o, internal::DatabaseHandle d)
      : options(std::move(o)), db(std::move(d)), pool(db.get(), options.max_connections) {}

  const EngineOptions options;  // as normalised by Open
  internal::DatabaseHandle db;
  internal::ConnectionPool pool;
  internal::Watchdog watchdog;
};

}  // namespace hangar::duckdb

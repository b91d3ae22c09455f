#pragma once
// The ChangeFeed of processes sharing a PostgreSQL database: a change is published with
// NOTIFY on channel `hangar_changes:<schema>` (payload "<origin> <topic> <key>"), and a thread of
// each feed LISTENs on a connection of its own and delivers the other processes' changes.
// Delivery takes milliseconds; a lost connection is reopened (backing off up to 5 s) and
// then every listener hears "" (anything may have changed while it was away).

#include <libpq-fe.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "db/change_feed.h"
#include "db/sql/sql.h"

namespace hangar::db {

class PgChangeFeed final : public ChangeFeed {
 public:
  // Listens on `url` (connected and LISTENing before this returns, so nothing published
  // after it is missed) and publishes through `pool`. Errors: those of PgConnection::Open.
  static Result<std::unique_ptr<PgChangeFeed>> Open(const std::string& url,
                                                    std::shared_ptr<Pool> pool);
  ~PgChangeFeed() override;  // stops the listening thread

  void Publish(std::string_view topic, std::string_view key) override;

 private:
  PgChangeFeed(std::string url, std::shared_ptr<Pool> pool);
  // Opens the listening connection; false (logged) when it cannot.
  bool Listen();
  void Run();
  void Receive();

  const std::string url_;
  const std::shared_ptr<Pool> pool_;
  const std::string origin_;  // this feed's random id: its own notifications are skipped
  // "hangar_changes:<schema>", set by the first Listen, before the thread starts, and
  // never again.
  std::string channel_;
  PGconn* listen_ = nullptr;  // the listening connection; the thread's alone once started
  int wake_[2] = {-1, -1};    // a pipe: the destructor's byte wakes the thread
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hangar::db

#include "db/postgres/pg_change_feed.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/log.h"
#include "core/util.h"
#include "db/postgres/pg_conn.h"

namespace hangar::db {
namespace {

// Channels are per database, not per schema: the schema is in the name, so hubs that
// share a database in schemas of their own (tests do) do not hear each other.
constexpr std::string_view kChannelPrefix = "hangar_changes:";
// NOTIFY's payload limit is 8000 bytes; keys are names and hashes, far shorter.
constexpr size_t kMaxPayload = 7900;

}  // namespace

PgChangeFeed::PgChangeFeed(std::string url, std::shared_ptr<Pool> pool)
    : url_(std::move(url)), pool_(std::move(pool)), origin_(RandomHex(8)) {}

Result<std::unique_ptr<PgChangeFeed>> PgChangeFeed::Open(const std::string& url,
                                                         std::shared_ptr<Pool> pool) {
  std::unique_ptr<PgChangeFeed> feed(new PgChangeFeed(url, std::move(pool)));
  if (!feed->Listen()) {  // later losses are retried; the first is the caller's to report
    return MakeError(ErrorCode::Unavailable,
                     "PostgreSQL: cannot LISTEN for changes at " + RedactedDatabaseUrl(url));
  }
  if (::pipe2(feed->wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    return MakeError(ErrorCode::Internal, "pipe for the change feed failed");
  feed->thread_ = std::thread([f = feed.get()] { f->Run(); });
  return feed;
}

PgChangeFeed::~PgChangeFeed() {
  stopping_ = true;
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  if (listen_) PQfinish(listen_);
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

bool PgChangeFeed::Listen() {
  if (listen_) PQfinish(listen_);
  listen_ = PQconnectdb(url_.c_str());
  if (listen_ && PQstatus(listen_) == CONNECTION_OK) {
    PGresult* res = PQexec(listen_, "SELECT current_schema()");
    bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    // Set once, before the thread starts: Publish reads it from any thread.
    if (ok && channel_.empty()) channel_ = std::string(kChannelPrefix) + PQgetvalue(res, 0, 0);
    PQclear(res);
    if (ok) {
      char* quoted = PQescapeIdentifier(listen_, channel_.data(), channel_.size());
      ok = quoted != nullptr;
      if (ok) {
        res = PQexec(listen_, (std::string("LISTEN ") + quoted).c_str());
        PQfreemem(quoted);
        ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
      }
    }
    if (ok) return true;
  }
  Log("db")->warn("change feed: cannot listen at {}: {}", RedactedDatabaseUrl(url_),
                  listen_ ? PQerrorMessage(listen_) : "out of memory");
  if (listen_) PQfinish(listen_);
  listen_ = nullptr;
  return false;
}

void PgChangeFeed::Publish(std::string_view topic, std::string_view key) {
  Deliver(topic, key);
  std::string payload = origin_ + ' ' + std::string(topic) + ' ' + std::string(key);
  if (payload.size() > kMaxPayload) payload = origin_ + ' ' + std::string(topic) + ' ';
  auto sent = [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT pg_notify(?, ?)"));
    return s.Bind(1, channel_).Bind(2, payload).Run();
  }();
  if (!sent) Log("db")->warn("change feed: {} {} not sent: {}", topic, key, sent.error().message);
}

void PgChangeFeed::Run() {
  auto backoff = std::chrono::milliseconds(100);
  while (!stopping_) {
    if (!listen_) {
      pollfd wake{wake_[0], POLLIN, 0};
      ::poll(&wake, 1, static_cast<int>(backoff.count()));
      if (stopping_) break;
      if (!Listen()) {
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
        continue;
      }
      backoff = std::chrono::milliseconds(100);
      Log("db")->info("change feed: listening again; dropping every cache");
      Deliver("", "");  // what changed while the connection was down is unknown
    }
    pollfd fds[2] = {{PQsocket(listen_), POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (stopping_) break;
    if (fds[0].revents != 0) Receive();
  }
}

void PgChangeFeed::Receive() {
  if (PQconsumeInput(listen_) == 0) {
    Log("db")->warn("change feed: connection lost: {}", PQerrorMessage(listen_));
    PQfinish(listen_);
    listen_ = nullptr;
    return;
  }
  while (PGnotify* n = PQnotifies(listen_)) {
    std::string_view payload(n->extra);
    size_t a = payload.find(' ');
    size_t b = a == std::string_view::npos ? a : payload.find(' ', a + 1);
    if (b != std::string_view::npos && payload.substr(0, a) != origin_) {
      Deliver(payload.substr(a + 1, b - a - 1), payload.substr(b + 1));
    }
    PQfreemem(n);
  }
}

}  // namespace hangar::db

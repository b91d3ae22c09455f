#pragma once
// Server: the HTTP/1.1 front door. Boost.Beast on Asio with C++20 coroutines, one I/O
// thread per core, keep-alive, a bounded worker pool that runs the (blocking) handlers,
// bodies streamed in both directions, one access-log line per request.
// Beast and Asio stay inside server.cc so the rest of the tree compiles fast.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "http/router.h"

namespace hangar::http {

struct ServerOptions {
  std::string host = "127.0.0.1";           // address to bind
  uint16_t port = 8080;                     // 0 picks a free port
  int io_threads = 0;                       // 0 = one per core
  int worker_threads = 16;                  // handler pool size (blocking work); handlers reading a
                                            // body larger than body_buffer_bytes get a thread each
  std::string public_url;                   // "" = absolute URLs from the request's Host header
  size_t max_header_bytes = 16384;          // larger request heads get 431
  std::chrono::seconds idle_timeout{60};    // keep-alive idle and per-read/write timeout
  std::chrono::seconds shutdown_grace{30};  // SIGTERM: how long in-flight requests may run
  // Request bodies (docs/config.md §limits). A request with a body is admitted (route,
  // authentication) from its head alone; then up to body_buffer_bytes of the body are read
  // on the connection's strand before the handler runs, so a slow client holds a
  // connection, not a worker. Only a body larger than that reaches its handler unfinished.
  size_t body_buffer_bytes = size_t{1} << 20;        // also the largest body of a caller the
                                                     // router left anonymous (413 above)
  uint64_t body_memory_bytes = uint64_t{64} << 20;   // all read-ahead buffers together
  std::chrono::milliseconds body_memory_wait{2000};  // a body over that waits; then 503
  uint64_t min_body_rate = 1024;  // bytes/s, averaged over body_rate_window of time spent
                                  // waiting for body bytes; slower bodies get 408; 0 = none
  std::chrono::seconds body_rate_window{30};
  std::chrono::seconds body_time_limit{3600};  // admission to a body's last byte; 0 = none
  int connections_per_ip = 256;      // open connections per client IP (429 above); 0 = any
  int anonymous_bodies_per_ip = 64;  // bodies in flight from anonymous callers per IP (429
                                     // above); 0 = any
  int bodies_per_principal = 16;     // bodies over body_buffer_bytes in flight per signed-in
                                     // user (429 above); 0 = any
  int streaming_bodies = 1024;       // bodies over body_buffer_bytes in flight in all, each on a
                                     // thread of its own (503 above)
  // What those handlers keep of their bodies (a commit's NDJSON, a JSON body), together;
  // Request::body_memory. A handler over it waits handler_memory_wait; then 503.
  uint64_t handler_memory_bytes = uint64_t{512} << 20;
  std::chrono::milliseconds handler_memory_wait{30000};
  bool access_log = true;
  bool access_log_json = false;  // one JSON object a line (log.access_format = "json")
  bool handle_signals = true;    // SIGTERM/SIGINT start a graceful stop
  // A graceful stop first leaves the load balancer's rotation: `on_drain` runs (readiness
  // turns false), then the server goes on accepting and serving for `drain_delay` (answers
  // now close their connections) so that the balancer's health check sees it and sends
  // new requests elsewhere; only then does it stop accepting and finish what is in flight.
  // 0: stop accepting at once (one process, nothing in front of it).
  std::chrono::milliseconds drain_delay{0};
  std::function<void()> on_drain;
  // Told of each request (metrics): `on_request` when its head has been read, then
  // `on_answered` once, when its answer was sent or the connection failed, with the status
  // and the seconds since the head arrived. Called on I/O threads: must be quick.
  std::function<void()> on_request;
  std::function<void(const Request&, int status, double seconds)> on_answered;
};

// Owns the listening socket, the I/O threads and the worker pool. Not copyable.
class Server {
 public:
  Server(ServerOptions options, const Router& router);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens. Returns the bound port. Errors: Internal (address in use, ...).
  Result<uint16_t> Listen();
  // Serves until Stop() (or a signal) and the drain finish. Blocks the calling thread,
  // which becomes one of the I/O threads. `on_ready` runs once accepting has begun.
  void Run(const std::function<void()>& on_ready = {});
  // Starts a graceful stop: on_drain, drain_delay, then no new connections, idle ones
  // closed, in-flight requests finish (up to shutdown_grace). Thread-safe.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hangar::http

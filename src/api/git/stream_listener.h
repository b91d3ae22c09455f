#pragma once
// StreamListener: the accept loop of the hub's non-HTTP git faces (the serv socket that
// sshd's `hangar serv` reaches, and git://; issue 18): one thread accepts, and each
// connection runs its handler on a thread of its own, at most max_connections at once
// (beyond that `refuse` answers and the connection is closed). Connections are blocking
// sockets; the handler owns the conversation, the listener closes the socket after it.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "core/result.h"

namespace hangar::api {

// A listening TCP socket on `host`:`port` (port 0: any free one, written to *bound).
// Errors: Internal naming the address.
Result<int> ListenTcp(const std::string& host, uint16_t port, uint16_t* bound);
// A listening Unix socket at `path` (a stale socket file there is replaced), mode 0600.
// Errors: BadRequest (path longer than a socket address holds), Internal.
Result<int> ListenUnix(const std::string& path);

class StreamListener {
 public:
  // Runs the conversation on `fd`; `peer` is "ip" for TCP, "" for a Unix socket.
  using Handler = std::function<void(int fd, const std::string& peer)>;
  // Answers a connection over the limit before it is closed (may do nothing).
  using Refuse = std::function<void(int fd)>;

  // Takes `listen_fd`. `name` is for logs ("git://", "serv socket").
  StreamListener(std::string name, int listen_fd, int max_connections, Handler handler,
                 Refuse refuse);
  ~StreamListener();  // Stop()
  StreamListener(const StreamListener&) = delete;
  StreamListener& operator=(const StreamListener&) = delete;

  // Starts accepting. Errors: Internal (no thread).
  Result<void> Start();
  // Stops accepting, shuts every live connection down (their handlers then end) and waits
  // for them. Idempotent.
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int fd, std::string peer);

  const std::string name_;
  const int listen_fd_;
  const int max_connections_;
  const Handler handler_;
  const Refuse refuse_;
  int wake_[2] = {-1, -1};  // a pipe that ends the accept loop's poll
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::unordered_set<int> live_;  // guarded by mu_
  bool stopping_ = false;         // guarded by mu_
};

}  // namespace hangar::api

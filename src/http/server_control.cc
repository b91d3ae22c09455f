// Server's listening and stopping (server_internal.h). Run, which spawns the accept loop,
// is in server.cc with the coroutines.

#include <sys/resource.h>

#include "http/server_internal.h"

namespace hangar::http {

Server::Server(ServerOptions options, const Router& router)
    : impl_(std::make_unique<Impl>(std::move(options), router)) {}

Server::~Server() { impl_->ioc.stop(); }

Result<uint16_t> Server::Listen() {
  auto& i = *impl_;
  // Every connection is a descriptor: take all the hard limit allows (often 1,024 soft of
  // 524,288 hard), so the per-IP limits, not the descriptor table, decide who is refused.
  if (rlimit nofile{};
      getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  beast::error_code ec;
  auto addr = asio::ip::make_address(i.options.host, ec);
  if (ec)
    return MakeError(ErrorCode::BadRequest, "invalid listen address '" + i.options.host + "'");
  tcp::endpoint ep(addr, i.options.port);
  i.acceptor.open(ep.protocol(), ec);
  if (!ec) i.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) i.acceptor.bind(ep, ec);
  if (!ec) i.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return MakeError(ErrorCode::Internal, "cannot listen on " + i.options.host + ":" +
                                              std::to_string(i.options.port) + ": " + ec.message());
  }
  i.port = i.acceptor.local_endpoint().port();
  return i.port;
}

void Server::Stop() {
  asio::post(impl_->ioc, [this] { impl_->BeginStop(); });
}

void Server::Impl::BeginStop() {
  if (draining.exchange(true)) return;
  if (options.on_drain) options.on_drain();
  if (options.drain_delay.count() <= 0) return StopAccepting();
  Log("http")->info("stopping: not ready; serving {} ms more for the balancer to notice",
                    options.drain_delay.count());
  drain_timer.expires_after(options.drain_delay);
  drain_timer.async_wait([this](beast::error_code) { StopAccepting(); });
}

void Server::Impl::StopAccepting() {
  if (stopping.exchange(true)) return;
  Log("http")->info("stopping: draining in-flight requests (grace {}s)",
                    options.shutdown_grace.count());
  beast::error_code ignored;
  acceptor.close(ignored);  // the signals stay armed: a second one stops at once
  std::lock_guard lock(mu);
  for (auto& w : conns) {
    if (auto c = w.lock()) {
      asio::post(c->stream.get_executor(), [c] {
        if (c->idle) c->stream.cancel();
      });
    }
  }
  if (live == 0) {
    ioc.stop();
    return;
  }
  grace_timer.expires_after(options.shutdown_grace);
  grace_timer.async_wait([this](beast::error_code ec) {
    if (!ec) {
      Log("http")->warn("grace period over; stopping with requests in flight");
      ioc.stop();
    }
  });
}

void Server::Impl::ConnDone() {
  if (--live == 0 && stopping) ioc.stop();
}

}  // namespace hangar::http

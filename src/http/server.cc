#include "http/server.h"

#include <sys/resource.h>

#include "http/server_internal.h"

namespace hangar::http {

namespace {

// A Host header value that is a plain host[:port] or [v6]:port (or absent).
bool ValidHost(std::string_view h) {
  for (char ch : h) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '-' || ch == ':' || ch == '[' || ch == ']' || ch == '_';
    if (!ok) return false;
  }
  return h.size() <= 255;
}

// RFC 9112 §6.1: a Transfer-Encoding we can decode is exactly one "chunked"; anything
// else (say "gzip, chunked") would hand the handler bytes it cannot read, so it gets 400.
bool OnlyChunked(const bhttp::request_parser<bhttp::empty_body>& hp) {
  const auto& h = hp.get();
  if (h.count(bhttp::field::transfer_encoding) != 1) return false;
  std::string_view v = h[bhttp::field::transfer_encoding];
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return beast::iequals(v, "chunked");
}

}  // namespace

std::shared_ptr<Request> Server::Impl::MakeRequest(
    const bhttp::request_parser<bhttp::empty_body>& hp, const Conn& c) {
  const auto& h = hp.get();
  auto req = std::make_shared<Request>();
  req->method_name = std::string(h.method_string());
  req->method = ParseMethod(req->method_name);
  req->target = std::string(h.target());
  size_t q = req->target.find('?');
  req->path = req->target.substr(0, q);
  if (q != std::string::npos) req->query = req->target.substr(q + 1);
  req->headers.reserve(16);
  for (const auto& f : h) {
    std::string name(f.name_string());
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    req->headers.emplace_back(std::move(name), std::string(f.value()));
  }
  req->request_id = id_prefix + std::to_string(next_id.fetch_add(1));
  req->remote = c.remote;
  if (!options.public_url.empty()) {
    req->base_url = options.public_url;
  } else {
    std::string host(req->Header("host"));
    bool has_port = !host.empty() && host.back() != ']' &&
                    host.find(':', host.rfind(']') == std::string::npos ? 0 : host.rfind(']')) !=
                        std::string::npos;
    if (host.empty())
      host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
    if (!has_port) host += ":" + std::to_string(port);
    req->base_url = "http://" + host;
  }
  return req;
}

asio::awaitable<void> Server::Impl::Session(std::shared_ptr<Conn> c) {
  bool unread_body = false;  // the last answer left request bytes unread (lingering close)
  for (;;) {
    c->idle = true;
    if (stopping) break;
    bhttp::request_parser<bhttp::empty_body> hp;
    hp.header_limit(static_cast<uint32_t>(options.max_header_bytes));
    // Beast checks Content-Length against the body limit (1 MB default) while reading the
    // header; bodies are streamed and capped by their handlers, so no limit here.
    hp.body_limit(boost::none);
    c->stream.expires_after(options.idle_timeout);
    auto [ec, n] = co_await bhttp::async_read_header(c->stream, c->buffer, hp, kTuple);
    c->idle = false;
    // A malformed or oversized head, or framing we do not accept (RFC 9112 §6.1: a
    // transfer coding other than exactly chunked; §3.2: one Host for HTTP/1.1), still gets
    // a clear answer before the close.
    std::optional<Error> reject;
    if (ec) {
      bool too_big = ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow;
      bool closed = ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message;
      if (too_big) {
        reject = MakeError(ErrorCode::HeadersTooLarge, "request header fields too large");
      } else if (!closed &&
                 ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
        reject = MakeError(ErrorCode::BadRequest, "malformed request: " + ec.message());
      }
    } else if (hp.get().count(bhttp::field::transfer_encoding) && !OnlyChunked(hp)) {
      reject = MakeError(ErrorCode::BadRequest,
                         "unsupported Transfer-Encoding '" +
                             std::string(hp.get()[bhttp::field::transfer_encoding]) +
                             "' (only 'chunked' alone)");
    } else if (hp.get().version() >= 11 && hp.get().count(bhttp::field::host) != 1) {
      reject = MakeError(ErrorCode::BadRequest, "an HTTP/1.1 request needs exactly one Host");
    } else if (!ValidHost(hp.get()[bhttp::field::host])) {
      // Host goes into absolute URLs (Link, LFS hrefs): only a host[:port] may.
      reject = MakeError(ErrorCode::BadRequest, "invalid Host header");
    }
    if (reject) {
      co_await Reject(*c, *reject);
      // Whatever the client sends after a refused head is unread.
      unread_body = !ec;
    }
    if (ec || reject) break;
    auto start = Clock::now();
    auto req = MakeRequest(hp, *c);
    bool client_keep_alive = hp.get().keep_alive();
    bool expect_continue = req->Header("expect") == "100-continue";
    c->body_parser = std::make_unique<bhttp::request_parser<bhttp::buffer_body>>(std::move(hp));
    c->body_parser->body_limit(boost::none);
    c->body_failed = false;
    c->raw_left.reset();
    if (!c->body_parser->is_done() && !c->body_parser->chunked() &&
        c->body_parser->content_length()) {
      c->raw_left = *c->body_parser->content_length();
    }
    c->send_continue = expect_continue;
    Response res;
    if (c->body_parser->is_done()) {
      // No body: admission and handler in one worker hop, unless the handler may wait.
      req->body = std::make_shared<StringSource>("");
      Admission admission;
      std::optional<Response> done = co_await OnPool(pool, [&]() -> std::optional<Response> {
        admission = router.Admit(*req);
        if (admission.answer) return std::move(*admission.answer);
        if (admission.route->need.waits) return std::nullopt;
        Response r = router.Run(admission, *req);
        InlineSmallStream(r, *req);
        return r;
      });
      // (Not a ?: around the co_await: GCC 12 miscompiles that.)
      if (done) {
        res = std::move(*done);
      } else {
        res = co_await RunOnOwnThread(admission, *req);
      }
    } else {
      res = co_await ServeWithBody(c, *req);
    }
    // Body bytes the handler left unread make the connection unusable for the next request.
    bool body_consumed = c->BodyDone() && !c->body_failed;
    bool keep = client_keep_alive && !res.close && !stopping && body_consumed;
    auto sent = co_await Write(*c, *req, res, keep);
    res.stream.reset();
    if (options.access_log) {
      auto ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      Log("access")->info("[req {}] {} {} {} {} {} {:.2f}ms {}", req->request_id, req->remote,
                          req->method_name, req->target, res.status, sent ? *sent : 0, ms,
                          req->principal.anonymous ? "-" : req->principal.name);
    }
    req->body.reset();
    unread_body = sent && !body_consumed;
    if (!sent || !keep) break;
  }
  if (unread_body) co_await Linger(*c);
  beast::error_code ignored;
  c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  c->stream.socket().close(ignored);
  ConnDone();
}

asio::awaitable<void> Server::Impl::Linger(Conn& c) {
  // Closing with request bytes still unread makes the kernel send a RST, which can destroy
  // the answer (say a 400 for an oversized upload) before the client reads it. Stop
  // sending, then discard what still arrives, briefly and boundedly.
  beast::error_code ignored;
  c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  char sink[16384];
  c.stream.expires_after(kLingerTime);  // for the whole drain, not per read
  for (size_t drained = 0; drained < kLingerBytes;) {
    auto [ec, n] = co_await c.stream.async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
    drained += n;
  }
}

asio::awaitable<void> Server::Impl::RefuseConn(std::shared_ptr<Conn> c) {
  co_await Reject(
      *c, MakeError(ErrorCode::TooManyRequests,
                    "too many connections from " + c->ip + " (limits.connections_per_ip = " +
                        std::to_string(options.connections_per_ip) + ")"));
  co_await Linger(*c);
  beast::error_code ignored;
  c->stream.socket().close(ignored);
  ConnDone();
}

void Server::Impl::ConnDone() {
  if (--live == 0 && stopping) ioc.stop();
}

asio::awaitable<void> Server::Impl::AcceptLoop() {
  for (;;) {
    auto [ec, sock] = co_await acceptor.async_accept(asio::make_strand(ioc), kTuple);
    if (ec) {
      if (stopping || ec == asio::error::operation_aborted) co_return;
      // E.g. EMFILE: the pending connection stays queued, so accepting again at once would
      // spin. Keep serving the others and retry shortly.
      Log("http")->warn("accept: {}; retrying in 100 ms", ec.message());
      accept_backoff.expires_after(std::chrono::milliseconds(100));
      co_await accept_backoff.async_wait(kTuple);
      continue;
    }
    beast::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    auto c = std::make_shared<Conn>(std::move(sock), options);
    auto ep = c->stream.socket().remote_endpoint(ignored);
    c->ip = ep.address().to_string();
    c->remote = c->ip + ":" + std::to_string(ep.port());
    bool admitted = conns_per_ip.TryAcquire(c->ip, options.connections_per_ip);
    if (admitted) c->ip_slot = PerKeySlot(conns_per_ip, c->ip);
    {
      std::lock_guard lock(mu);
      conns.remove_if([](const std::weak_ptr<Conn>& w) { return w.expired(); });
      conns.push_back(c);
    }
    ++live;
    asio::co_spawn(c->stream.get_executor(), admitted ? Session(c) : RefuseConn(c), asio::detached);
  }
}

void Server::Impl::BeginStop() {
  if (stopping.exchange(true)) return;
  Log("http")->info("stopping: draining in-flight requests (grace {}s)",
                    options.shutdown_grace.count());
  beast::error_code ignored;
  acceptor.close(ignored);
  signals.cancel(ignored);
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

void Server::Run(const std::function<void()>& on_ready) {
  auto& i = *impl_;
  if (i.options.handle_signals) {
    i.signals.add(SIGTERM);
    i.signals.add(SIGINT);
    i.signals.async_wait([&i](beast::error_code ec, int) {
      if (!ec) i.BeginStop();
    });
  }
  asio::co_spawn(i.ioc, i.AcceptLoop(), asio::detached);
  if (on_ready) on_ready();
  int n = i.options.io_threads > 0
              ? i.options.io_threads
              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back([&i] { i.ioc.run(); });
  i.ioc.run();
  for (auto& t : threads) t.join();
  if (i.live > 0) {
    // Requests outlived the grace period; their workers may be blocked on this io_context.
    Log("http")->warn("{} connection(s) still open at exit", i.live.load());
    std::fflush(nullptr);
    std::_Exit(0);
  }
  i.body_threads.Join();
  i.pool.join();
}

void Server::Stop() {
  asio::post(impl_->ioc, [this] { impl_->BeginStop(); });
}

}  // namespace hangar::http

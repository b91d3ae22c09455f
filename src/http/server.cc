// Server's coroutines (server_internal.h): the accept loop, a connection's requests, body
// reads under their limits, and responses. Plain code is in server_conn.cc and
// server_control.cc; every coroutine stays in this file (clang 14).

#include <sys/sendfile.h>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "http/server_internal.h"

namespace hangar::http {

namespace {

// Runs f() wherever post(job) runs `job` (a pool, a thread of its own); the awaiting
// coroutine resumes on its own executor.
template <typename Post, typename F>
asio::awaitable<std::invoke_result_t<F&>> RunVia(Post post, F f) {
  using R = std::invoke_result_t<F&>;
  std::optional<R> out;
  co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
      [&post, &out, &f](auto handler) {
        post([&out, &f, h = std::move(handler)]() mutable {
          out.emplace(f());
          auto ex = asio::get_associated_executor(h);
          asio::post(ex, std::move(h));
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

// Runs f() on `pool`.
template <typename F>
asio::awaitable<std::invoke_result_t<F&>> OnPool(asio::thread_pool& pool, F f) {
  return RunVia([&pool](auto job) { asio::post(pool, std::move(job)); }, std::move(f));
}

}  // namespace

// Runs one socket read of the body (`op`, not yet started) under the body timer.
static asio::awaitable<std::tuple<beast::error_code, size_t>> TimedBodyRead(
    const std::shared_ptr<Conn>& c, asio::awaitable<std::tuple<beast::error_code, size_t>> op) {
  auto start = Clock::now();
  auto [deadline, why] = c->NextDeadline(start);
  uint64_t gen = ++c->read_gen;
  c->expired = Conn::Expiry::None;
  c->body_timer.expires_at(deadline);
  // Cancelling the socket (not closing it, as tcp_stream's own timeout would) leaves it
  // open for the 408.
  c->body_timer.async_wait([c, gen, why = why](beast::error_code ec) {
    if (ec || c->read_gen != gen) return;
    c->expired = why;
    beast::error_code ignored;
    c->stream.socket().cancel(ignored);
  });
  c->stream.expires_never();
  auto out = co_await std::move(op);
  ++c->read_gen;
  c->body_timer.cancel();
  c->CountBodyRead(std::get<1>(out), Clock::now() - start);
  co_return out;
}

// Reads some body bytes into `buf` (not empty) on the connection's strand: what the head
// read left in c->buffer first, then the socket, under the body timer. Returns 0 only at
// the end of the body. Sends "100 Continue" first when the client waits for it. Errors:
// RequestTimeout (too slow, too long, silent), BadRequest (cut short, bad chunk framing).
static asio::awaitable<Result<size_t>> ReadSomeBody(const std::shared_ptr<Conn>& c,
                                                    std::span<char> buf) {
  if (c->send_continue) {
    c->send_continue = false;
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    c->stream.expires_after(c->options.idle_timeout);
    auto [ec, n] = co_await asio::async_write(
        c->stream, asio::buffer(kContinue, sizeof kContinue - 1), kTuple);
    if (ec) co_return MakeError(ErrorCode::BadRequest, "connection closed");
  }
  if (c->raw_left) {
    // Content-Length framing: the socket straight into the reader's buffer.
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), *c->raw_left));
    if (want == 0) co_return size_t{0};
    size_t got = std::min(want, c->buffer.size());
    if (got > 0) {
      asio::buffer_copy(asio::buffer(buf.data(), got), c->buffer.data());
      c->buffer.consume(got);
    } else {
      auto [ec, n] = co_await TimedBodyRead(
          c, c->stream.async_read_some(asio::buffer(buf.data(), want), kTuple));
      got = n;
      if (ec) {
        *c->raw_left -= got;
        if (c->expired != Conn::Expiry::None) co_return c->ExpiryError();
        co_return MakeError(ErrorCode::BadRequest, "request body cut short (" + ec.message() + ")");
      }
    }
    *c->raw_left -= got;
    co_return got;
  }
  // Beast reads into c->buffer as far as its free capacity goes (512 bytes by default).
  auto& parser = *c->body_parser;
  if (c->buffer.capacity() - c->buffer.size() < kBodyReadSize) {
    c->buffer.reserve(std::min(c->buffer.size() + kBodyReadSize, c->buffer.max_size()));
  }
  while (!parser.is_done()) {
    parser.get().body().data = buf.data();
    parser.get().body().size = buf.size();
    auto [ec, n] =
        co_await TimedBodyRead(c, bhttp::async_read_some(c->stream, c->buffer, parser, kTuple));
    if (ec == bhttp::error::need_buffer) ec = {};
    size_t got = buf.size() - parser.get().body().size;
    if (ec) {
      if (c->expired != Conn::Expiry::None) co_return c->ExpiryError();
      if (ec == bhttp::error::buffer_overflow) {
        co_return MakeError(ErrorCode::BadRequest,
                            "chunked framing too long: a chunk-size line (with its extensions) "
                            "or trailer over " +
                                std::to_string(kFramingSlack) + " bytes");
      }
      co_return MakeError(ErrorCode::BadRequest, "request body cut short (" + ec.message() + ")");
    }
    if (got > 0) co_return got;
  }
  co_return size_t{0};
}

Result<size_t> BodySource::Read(std::span<char> buf) {
  if (done_ || buf.empty()) return size_t{0};
  if (ahead_) {
    size_t n = std::min(buf.size(), ahead_->data.size() - ahead_pos_);
    if (n > 0) {
      std::memcpy(buf.data(), ahead_->data.data() + ahead_pos_, n);
      ahead_pos_ += n;
      if (remaining_) *remaining_ -= std::min<uint64_t>(*remaining_, n);
      return n;
    }
    ahead_.reset();  // gives the memory back to the budget
  }
  if (!conn_) {
    done_ = true;
    return size_t{0};
  }
  auto promise = std::make_shared<std::promise<Result<size_t>>>();
  auto future = promise->get_future();
  asio::co_spawn(conn_->stream.get_executor(), Fill(conn_, buf, promise), asio::detached);
  Result<size_t> r = MakeError(ErrorCode::BadRequest, "request body cut short");
  try {
    r = future.get();
  } catch (const std::future_error&) {
    // The server stopped before the read could run.
  }
  if (!r) {
    done_ = true;
    return r;
  }
  if (*r == 0) done_ = true;
  if (remaining_) *remaining_ -= std::min<uint64_t>(*remaining_, *r);
  return r;
}

asio::awaitable<void> BodySource::Fill(std::shared_ptr<Conn> c, std::span<char> buf,
                                       std::shared_ptr<std::promise<Result<size_t>>> p) {
  size_t want = std::min(buf.size(), kBodyBatch);
  size_t got = 0;
  while (got < want) {
    Result<size_t> r = co_await ReadSomeBody(c, buf.subspan(got, want - got));
    if (!r) {
      c->body_failed = true;
      p->set_value(std::move(r).error());
      co_return;
    }
    if (*r == 0) break;
    got += *r;
  }
  p->set_value(got);
}

asio::awaitable<std::optional<uint64_t>> Server::Impl::Write(Conn& c, const Request& req,
                                                             Response& res, bool keep_alive) {
  if (req.method == Method::Head) co_return co_await WriteHead(c, res, keep_alive);
  if (!res.stream) co_return co_await WriteWhole(c, res, keep_alive);
  co_return co_await WriteStream(c, req, res, keep_alive);
}

asio::awaitable<std::optional<uint64_t>> Server::Impl::WriteHead(Conn& c, Response& res,
                                                                 bool keep_alive) {
  bhttp::response<bhttp::empty_body> r;
  FillHead(r, res, keep_alive);
  if (res.stream && !res.content_length) {
    r.chunked(true);
  } else {
    r.content_length(res.stream ? res.content_length.value_or(0)
                                : res.content_length.value_or(res.body.size()));
  }
  bhttp::response_serializer<bhttp::empty_body> sr(r);
  c.stream.expires_after(options.idle_timeout);
  auto [ec, n] = co_await bhttp::async_write_header(c.stream, sr, kTuple);
  if (ec) co_return std::nullopt;
  co_return uint64_t{0};
}

asio::awaitable<std::optional<uint64_t>> Server::Impl::WriteWhole(Conn& c, Response& res,
                                                                  bool keep_alive) {
  bhttp::response<bhttp::string_body> r;
  FillHead(r, res, keep_alive);
  r.body() = std::move(res.body);
  r.prepare_payload();
  uint64_t len = r.body().size();
  c.stream.expires_after(options.idle_timeout);
  auto [ec, n] = co_await bhttp::async_write(c.stream, r, kTuple);
  if (ec) co_return std::nullopt;
  co_return len;
}

asio::awaitable<std::optional<uint64_t>> Server::Impl::WriteStream(Conn& c, const Request& req,
                                                                   Response& res, bool keep_alive) {
  bhttp::response<bhttp::buffer_body> r;
  FillHead(r, res, keep_alive);
  if (res.content_length) {
    r.content_length(*res.content_length);
  } else {
    r.chunked(true);
  }
  r.body().data = nullptr;
  r.body().more = true;
  bhttp::response_serializer<bhttp::buffer_body> sr(r);
  c.stream.expires_after(options.idle_timeout);
  {
    auto [ec, n] = co_await bhttp::async_write_header(c.stream, sr, kTuple);
    if (ec) co_return std::nullopt;
  }
  if (auto region = res.stream->Region();
      region && res.content_length && region->length == *res.content_length) {
    co_return co_await SendFile(c, *region);
  }
  StreamReader reader(body_threads, pool, res.stream_waits);
  // Sized to the body when it is small; not zero-filled (it is written before it is read).
  size_t cap = res.content_length
                   ? static_cast<size_t>(std::clamp<uint64_t>(*res.content_length, 1, kStreamChunk))
                   : kStreamChunk;
  std::unique_ptr<char[]> buf(new char[cap]);
  std::span<char> window(buf.get(), cap);
  uint64_t total = 0;
  for (;;) {
    // A body of known length ends when that many bytes went out: no extra read for EOF.
    bool known_done = res.content_length && total == *res.content_length;
    Result<size_t> n = size_t{0};
    if (!known_done) n = co_await OnPool(reader.pool(), [&] { return res.stream->Read(window); });
    if (!n) {
      Log("http")->warn("[req {}] response stream failed: {}", req.request_id, n.error().message);
      co_return std::nullopt;
    }
    total += *n;
    if (res.content_length && total > *res.content_length) co_return std::nullopt;
    if (*n == 0 && res.content_length && total != *res.content_length) co_return std::nullopt;
    r.body().data = *n ? buf.get() : nullptr;
    r.body().size = *n;
    r.body().more = *n != 0;
    c.stream.expires_after(options.idle_timeout);
    auto [ec, w] = co_await bhttp::async_write(c.stream, sr, kTuple);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return std::nullopt;
    if (*n == 0) break;
  }
  co_return total;
}

// Sends a file window straight from the page cache to the socket (sendfile(2)), on the
// worker pool since a cold page means disk I/O; waits for socket space on the I/O thread.
asio::awaitable<std::optional<uint64_t>> Server::Impl::SendFile(Conn& c, FileRegion region) {
  using namespace asio::experimental::awaitable_operators;
  auto& sock = c.stream.socket();
  beast::error_code ec;
  sock.native_non_blocking(true, ec);
  if (ec) co_return std::nullopt;
  int out_fd = sock.native_handle();
  uint64_t sent = 0;
  asio::steady_timer timer(c.stream.get_executor());
  while (sent < region.length) {
    auto [n, err] = co_await OnPool(pool, [&] {
      off_t off = static_cast<off_t>(region.offset + sent);
      size_t want = static_cast<size_t>(std::min<uint64_t>(region.length - sent, 8 << 20));
      ssize_t r = ::sendfile(out_fd, region.fd, &off, want);
      return std::pair<ssize_t, int>(r, r < 0 ? errno : 0);
    });
    if (n > 0) {
      sent += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0 || (err != EAGAIN && err != EINTR)) co_return std::nullopt;  // file shrank
    timer.expires_after(options.idle_timeout);
    auto which =
        co_await (sock.async_wait(tcp::socket::wait_write, kTuple) || timer.async_wait(kTuple));
    if (which.index() == 1) co_return std::nullopt;  // client stopped reading
    if (std::get<0>(std::get<0>(which))) co_return std::nullopt;
  }
  co_return sent;
}

asio::awaitable<void> Server::Impl::Reject(Conn& c, const Error& e) {
  Request dummy;
  dummy.request_id = id_prefix + std::to_string(next_id.fetch_add(1));
  Response res = router.Render(ApiFamily::Plain, e, dummy);
  res.SetHeader("X-Request-Id", dummy.request_id);
  co_await Write(c, dummy, res, false);
  if (options.access_log) {
    dummy.remote = c.remote;
    dummy.method_name = dummy.target = "-";  // the head was refused unread
    LogAccess(dummy, res, 0, Clock::now());
  }
}

asio::awaitable<Result<void>> Server::Impl::Charge(Conn& c, uint64_t n) {
  auto until = Clock::now() + options.body_memory_wait;
  std::optional<asio::steady_timer> wait;
  while (!budget.TryCharge(n)) {
    if (Clock::now() >= until) {
      co_return MakeError(ErrorCode::Unavailable,
                          "the server holds as many request bodies in memory as it may (" +
                              std::to_string(budget.limit()) +
                              " bytes, limits.body_memory_bytes); try again shortly");
    }
    if (!wait) wait.emplace(c.stream.get_executor());
    wait->expires_after(std::chrono::milliseconds(20));
    co_await wait->async_wait(kTuple);
  }
  co_return Result<void>{};
}

asio::awaitable<Result<std::unique_ptr<BodyBuffer>>> Server::Impl::ReadAhead(
    std::shared_ptr<Conn> c, size_t cap, bool anonymous) {
  auto out = std::make_unique<BodyBuffer>(budget);
  if (anonymous) {
    out->anonymous_budget = &anonymous_budget;
    out->ip_counter = &anonymous_steps;
    out->ip = c->ip;
  }
  // Unauthenticated callers may hold half of the budget together, and one IP an eighth, so
  // that they never hold more than half of it against signed-in callers.
  const int ip_steps_limit =
      static_cast<int>(std::max<uint64_t>(1, budget.limit() / 8 / kBodyReadSize));
  size_t got = 0;
  while (got < cap && !c->BodyDone()) {
    if (got == out->data.size()) {
      // Grow by a read's worth at a time, so a trickler holds only what it sent.
      uint64_t step = std::min<uint64_t>(cap - got, kBodyReadSize);
      if (c->raw_left) step = std::min(step, *c->raw_left);
      if (anonymous) {
        if (!anonymous_steps.TryAcquire(c->ip, ip_steps_limit)) {
          co_return MakeError(ErrorCode::TooManyRequests,
                              "unauthenticated request bodies from " + c->ip +
                                  " hold as much memory as one address may (an eighth of "
                                  "limits.body_memory_bytes); try again shortly");
        }
        ++out->ip_steps;
        if (!anonymous_budget.TryCharge(step)) {
          co_return MakeError(ErrorCode::Unavailable,
                              "unauthenticated request bodies hold as much memory as they may "
                              "(half of limits.body_memory_bytes); try again shortly");
        }
        out->anonymous_charged += step;
      }
      Result<void> charged = co_await Charge(*c, step);
      if (!charged) co_return std::move(charged).error();
      out->charged += step;
      out->data.resize(got + step);
    }
    Result<size_t> n = co_await ReadSomeBody(c, std::span<char>(out->data).subspan(got));
    if (!n) {
      c->body_failed = true;
      co_return std::move(n).error();
    }
    if (*n == 0) break;
    got += *n;
  }
  out->data.resize(got);
  co_return out;
}

asio::awaitable<Response> Server::Impl::ServeWithBody(std::shared_ptr<Conn> c, Request& req) {
  // Route and credentials from the head alone: a refusal goes out before any body byte is
  // read (and without the 100 Continue a waiting client asked for).
  auto admission = co_await OnPool(pool, [&] { return router.Admit(req); });
  if (admission.answer) co_return std::move(*admission.answer);
  BodyPlaces places;
  if (auto refused = TakeBodyPlaces(*c, req, admission, places)) {
    co_return Refuse(admission, *refused, req);
  }
  c->BeginBody();
  // One byte past the bound tells a chunked body that ends there from a longer one.
  const size_t bound = options.body_buffer_bytes;
  size_t cap =
      c->raw_left ? static_cast<size_t>(std::min<uint64_t>(*c->raw_left, bound)) : bound + 1;
  // Memory shares are for callers without any checked credential: a ticket route's body
  // (an LFS transfer, counted per repo above) reads ahead as a signed-in caller's does.
  auto ahead = co_await ReadAhead(c, cap, places.capped);
  if (!ahead) co_return Refuse(admission, ahead.error(), req);
  bool complete = c->BodyDone();
  if (!complete && places.capped) {
    co_return Refuse(admission,
                     MakeError(ErrorCode::PayloadTooLarge,
                               "a request body of an unauthenticated caller may have at most " +
                                   std::to_string(bound) + " bytes (limits.body_buffer_bytes)"),
                     req);
  }
  req.body =
      std::make_shared<BodySource>(std::move(*ahead), complete ? nullptr : c, req.ContentLength());
  // A complete body runs on the common pool: its handler never waits on the socket (unless
  // it may wait in a queue of its own).
  if (complete) {
    if (admission.route->need.waits) co_return co_await RunOnOwnThread(admission, req);
    co_return co_await OnPool(pool, [&] {
      Response r = router.Run(admission, req);
      InlineSmallStream(r, req);
      return r;
    });
  }
  // The rest wait on their client: a thread each, a bounded number per signed-in caller
  // (anonymous ones are bounded per IP above) and in all.
  if (!places.quota_key.empty() && !places.principal_slot && !TakePrincipalPlace(places)) {
    co_return Refuse(admission, TooManyBodies(places), req);
  }
  co_return co_await RunOnOwnThread(admission, req);
}

asio::awaitable<Response> Server::Impl::RunOnOwnThread(const Admission& admission, Request& req) {
  if (!body_threads.TryReserve()) {
    Response r = router.Render(admission.route->api,
                               MakeError(ErrorCode::Unavailable,
                                         "the server runs as many waiting requests and large "
                                         "request bodies as it may (" +
                                             std::to_string(body_threads.limit()) +
                                             ", limits.streaming_bodies); try again shortly"),
                               req);
    r.SetHeader("X-Request-Id", req.request_id);
    co_return r;
  }
  req.body_memory = &handler_memory;
  req.body_memory_wait = options.handler_memory_wait;
  co_return co_await RunVia(
      [this](auto job) { body_threads.Start(std::move(job)); },
      [&] {
        Response r = router.Run(admission, req);
        InlineSmallStream(r, req);
        req.body_memory_held.reset();  // what the handler kept of the body is gone with it
        return r;
      });
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
    // A refused head still gets a clear answer before the close.
    std::optional<Error> reject = HeadProblem(ec, hp);
    if (reject) {
      co_await Reject(*c, *reject);
      // Whatever the client sends after a refused head is unread.
      unread_body = !ec;
    }
    if (ec || reject) break;
    auto start = Clock::now();
    if (options.on_request) options.on_request();
    auto req = MakeRequest(hp, *c);
    bool client_keep_alive = hp.get().keep_alive();
    c->TakeHead(std::move(hp), req->Header("expect") == "100-continue");
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
    bool keep = client_keep_alive && !res.close && !draining && body_consumed;
    auto sent = co_await Write(*c, *req, res, keep);
    res.stream.reset();
    if (options.access_log) LogAccess(*req, res, sent, start);
    if (options.on_answered) {
      options.on_answered(*req, res.status,
                          std::chrono::duration<double>(Clock::now() - start).count());
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

void Server::Run(const std::function<void()>& on_ready) {
  auto& i = *impl_;
  if (i.options.handle_signals) {
    i.signals.add(SIGTERM);
    i.signals.add(SIGINT);
    i.signals.async_wait([&i](beast::error_code ec, int) {
      if (ec) return;
      i.BeginStop();
      // A second signal ends the drain: no more waiting for the balancer or for requests.
      i.signals.async_wait([&i](beast::error_code ec2, int) {
        if (ec2) return;
        Log("http")->warn("second signal: stopping now");
        i.ioc.stop();
      });
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

}  // namespace hangar::http

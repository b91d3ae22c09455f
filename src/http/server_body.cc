// Request bodies: read ahead of the handler under the body rules and the memory budgets,
// handed to the handler as a ByteSource, and the handlers that wait on them run on threads
// of their own (issue 13, docs/config.md §limits).

#include "http/server_internal.h"

namespace hangar::http {

namespace {

// Runs one socket read of the body (`op`, not yet started) under the body timer.
asio::awaitable<std::tuple<beast::error_code, size_t>> TimedBodyRead(
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
asio::awaitable<Result<size_t>> ReadSomeBody(const std::shared_ptr<Conn>& c, std::span<char> buf) {
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

// The request body as a ByteSource: first the bytes read ahead of the handler, then (when
// they are not the whole body) the socket: each Read (on a worker thread) asks the
// connection's strand to read the next bytes straight into the caller's buffer, and waits.
class BodySource final : public ByteSource {
 public:
  // `ahead`: bytes read before the handler ran; `conn`: where the rest comes from, null
  // when `ahead` holds the whole body; `size`: the body's length when known.
  BodySource(std::unique_ptr<BodyBuffer> ahead, std::shared_ptr<Conn> conn,
             std::optional<uint64_t> size)
      : ahead_(std::move(ahead)), conn_(std::move(conn)), remaining_(size) {}

  Result<size_t> Read(std::span<char> buf) override {
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

  std::optional<uint64_t> Size() const override { return remaining_; }

 private:
  // Fills up to kBodyBatch bytes of `buf` per hand-off to the worker thread.
  static asio::awaitable<void> Fill(std::shared_ptr<Conn> c, std::span<char> buf,
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

  std::unique_ptr<BodyBuffer> ahead_;
  size_t ahead_pos_ = 0;
  std::shared_ptr<Conn> conn_;
  std::optional<uint64_t> remaining_;
  bool done_ = false;
};

}  // namespace

// A small streamed response body is read at once, in the handler's worker hop.
void InlineSmallStream(Response& r, const Request& req) {
  if (r.stream && r.content_length && *r.content_length <= kInlineBody &&
      req.method != Method::Head) {
    auto all = ReadAll(*r.stream, kInlineBody);
    if (all && all->size() == *r.content_length) {
      r.body = std::move(*all);
      r.stream.reset();
      r.content_length.reset();
    }
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
  auto refuse = [&](const Error& e) {
    Response r = router.Render(admission.route->api, e, req);
    r.SetHeader("X-Request-Id", req.request_id);
    return r;
  };
  // A caller still anonymous after admission cannot write, so its body has to fit in the
  // read-ahead; so do web forms (pages read their session themselves, and no page takes
  // more than a form). Only ticket routes (LFS transfers), whose ticket the router checked,
  // stream large bodies of callers without an identity to their handlers.
  bool anonymous = req.principal.anonymous;
  Gate gate = admission.route->need.gate;
  bool capped = anonymous && (gate != Gate::Ticket || admission.route->api == ApiFamily::Html);
  const size_t bound = options.body_buffer_bytes;
  if (capped && c->raw_left && *c->raw_left > bound) {
    co_return refuse(MakeError(ErrorCode::PayloadTooLarge,
                               "a request body of an unauthenticated caller may have at most " +
                                   std::to_string(bound) +
                                   " bytes (limits.body_buffer_bytes); this one declares " +
                                   std::to_string(*c->raw_left)));
  }
  PerKeySlot anonymous_slot;
  if (anonymous) {
    if (!anonymous_bodies.TryAcquire(c->ip, options.anonymous_bodies_per_ip)) {
      co_return refuse(
          MakeError(ErrorCode::TooManyRequests,
                    "too many request bodies in flight from unauthenticated callers at " + c->ip +
                        " (limits.anonymous_bodies_per_ip = " +
                        std::to_string(options.anonymous_bodies_per_ip) + ")"));
    }
    anonymous_slot = PerKeySlot(anonymous_bodies, c->ip);
  }
  // A signed-in caller's large bodies (or those of one credential of a route's own, such
  // as the tickets of one repo): at most bodies_per_principal at once, counted from the
  // head when its Content-Length already says the body will not fit the read-ahead.
  const std::string quota_key = anonymous ? req.quota_key : "user " + req.principal.name;
  PerKeySlot principal_slot;
  auto take_principal_slot = [&] {
    if (!streaming_by_principal.TryAcquire(quota_key, options.bodies_per_principal)) {
      return false;
    }
    principal_slot = PerKeySlot(streaming_by_principal, quota_key);
    return true;
  };
  auto too_many = [&] {
    return MakeError(ErrorCode::TooManyRequests,
                     "too many large request bodies in flight for " + quota_key +
                         " (limits.bodies_per_principal = " +
                         std::to_string(options.bodies_per_principal) + ")");
  };
  const bool counted = !quota_key.empty();
  if (counted && c->raw_left && *c->raw_left > bound && !take_principal_slot()) {
    co_return refuse(too_many());
  }
  c->BeginBody();
  // One byte past the bound tells a chunked body that ends there from a longer one.
  size_t cap =
      c->raw_left ? static_cast<size_t>(std::min<uint64_t>(*c->raw_left, bound)) : bound + 1;
  auto ahead = co_await ReadAhead(c, cap, anonymous);
  if (!ahead) co_return refuse(ahead.error());
  bool complete = c->BodyDone();
  if (!complete && capped) {
    co_return refuse(MakeError(ErrorCode::PayloadTooLarge,
                               "a request body of an unauthenticated caller may have at most " +
                                   std::to_string(bound) + " bytes (limits.body_buffer_bytes)"));
  }
  req.body =
      std::make_shared<BodySource>(std::move(*ahead), complete ? nullptr : c, req.ContentLength());
  auto run = [&] {
    Response r = router.Run(admission, req);
    InlineSmallStream(r, req);
    return r;
  };
  // A complete body runs on the common pool: its handler never waits on the socket (unless
  // it may wait in a queue of its own).
  if (complete) {
    if (admission.route->need.waits) co_return co_await RunOnOwnThread(admission, req);
    co_return co_await OnPool(pool, run);
  }
  // The rest wait on their client: a thread each, a bounded number per signed-in caller
  // (anonymous ones are bounded per IP above) and in all.
  if (counted && !principal_slot && !take_principal_slot()) co_return refuse(too_many());
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

}  // namespace hangar::http

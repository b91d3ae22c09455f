#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <sys/sendfile.h>

#include <atomic>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "core/log.h"
#include "core/util.h"

namespace hangar::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
// Lingering close after an answer that left request bytes unread: read and drop at most
// this much, for at most this long in all.
constexpr size_t kLingerBytes = size_t{8} << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kStreamChunk = 256 * 1024;   // response chunk read per worker hand-off
constexpr size_t kBodyReadSize = 64 * 1024;   // socket read size for chunked request bodies
constexpr size_t kBodyBatch = 1 << 20;        // request bytes gathered per worker hand-off
constexpr uint64_t kInlineBody = 64 * 1024;   // streamed bodies up to this are read at once

// A Host header value that is a plain host[:port] or [v6]:port (or absent).
bool ValidHost(std::string_view h) {
  for (char ch : h) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '-' || ch == ':' || ch == '[' || ch == ']' || ch == '_';
    if (!ok) return false;
  }
  return h.size() <= 255;
}

// Runs f() on `pool`; the awaiting coroutine resumes on its own executor.
template <typename F>
asio::awaitable<std::invoke_result_t<F&>> OnPool(asio::thread_pool& pool, F f) {
  using R = std::invoke_result_t<F&>;
  std::optional<R> out;
  co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
      [&pool, &out, &f](auto handler) {
        asio::post(pool, [&out, &f, h = std::move(handler)]() mutable {
          out.emplace(f());
          auto ex = asio::get_associated_executor(h);
          asio::post(ex, std::move(h));
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

}  // namespace

// One client connection. Its operations run on a strand (stream's executor).
struct Conn {
  explicit Conn(tcp::socket s) : stream(std::move(s)) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::unique_ptr<bhttp::request_parser<bhttp::buffer_body>> body_parser;
  // A body framed by Content-Length is read straight from the socket into the reader's
  // buffer, past the parser (no copy through `buffer`): the bytes still to come.
  std::optional<uint64_t> raw_left;
  bool body_failed = false;
  // Whether the current request's body has been read to its end.
  bool BodyDone() const { return raw_left ? *raw_left == 0 : body_parser->is_done(); }
  bool send_continue = false;  // "Expect: 100-continue" not yet answered
  bool idle = true;            // waiting for a request head (safe to close on stop)
  std::string remote;
};

// The request body as a ByteSource: each Read (on a worker thread) asks the connection's
// strand to read the next body bytes straight into the caller's buffer, and waits.
class SocketBodySource final : public ByteSource {
 public:
  SocketBodySource(std::shared_ptr<Conn> conn, std::chrono::seconds timeout,
                   std::optional<uint64_t> length)
      : conn_(std::move(conn)), timeout_(timeout), remaining_(length) {}

  Result<size_t> Read(std::span<char> buf) override {
    if (done_ || buf.empty()) return size_t{0};
    auto promise = std::make_shared<std::promise<Result<size_t>>>();
    auto future = promise->get_future();
    asio::co_spawn(conn_->stream.get_executor(), ReadSome(conn_, buf, timeout_, promise),
                   asio::detached);
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
  static asio::awaitable<void> ReadSome(std::shared_ptr<Conn> c, std::span<char> buf,
                                        std::chrono::seconds timeout,
                                        std::shared_ptr<std::promise<Result<size_t>>> p) {
    auto& parser = *c->body_parser;
    if (c->send_continue) {
      c->send_continue = false;
      static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      c->stream.expires_after(timeout);
      auto [ec, n] = co_await asio::async_write(
          c->stream, asio::buffer(kContinue, sizeof kContinue - 1), kTuple);
      if (ec) {
        c->body_failed = true;
        p->set_value(MakeError(ErrorCode::BadRequest, "connection closed"));
        co_return;
      }
    }
    if (c->raw_left) {
      // Content-Length framing: what the head read left in c->buffer first, then the
      // socket straight into the reader's buffer, up to kBodyBatch per hand-off.
      size_t want = static_cast<size_t>(
          std::min<uint64_t>(std::min(buf.size(), kBodyBatch), *c->raw_left));
      size_t got = std::min(want, c->buffer.size());
      if (got > 0) {
        asio::buffer_copy(asio::buffer(buf.data(), got), c->buffer.data());
        c->buffer.consume(got);
      }
      while (got < want) {
        c->stream.expires_after(timeout);
        auto [ec, n] = co_await c->stream.async_read_some(
            asio::buffer(buf.data() + got, want - got), kTuple);
        got += n;
        if (ec) {
          *c->raw_left -= got;
          c->body_failed = true;
          p->set_value(MakeError(ErrorCode::BadRequest,
                                 "request body cut short (" + ec.message() + ")"));
          co_return;
        }
      }
      *c->raw_left -= got;
      p->set_value(got);
      co_return;
    }
    // Beast reads into c->buffer as far as its free capacity goes (512 bytes by default):
    // give it room, and fill up to kBodyBatch per hand-off to the worker thread.
    if (c->buffer.capacity() - c->buffer.size() < kBodyReadSize) {
      c->buffer.reserve(c->buffer.size() + kBodyReadSize);
    }
    size_t got = 0;
    size_t want = std::min(buf.size(), kBodyBatch);
    while (!parser.is_done() && got < want) {
      parser.get().body().data = buf.data() + got;
      parser.get().body().size = buf.size() - got;
      c->stream.expires_after(timeout);
      auto [ec, n] = co_await bhttp::async_read_some(c->stream, c->buffer, parser, kTuple);
      if (ec == bhttp::error::need_buffer) ec = {};
      got = buf.size() - parser.get().body().size;
      if (ec) {
        c->body_failed = true;
        p->set_value(MakeError(ErrorCode::BadRequest,
                               "request body cut short (" + ec.message() + ")"));
        co_return;
      }
    }
    p->set_value(got);
  }

  std::shared_ptr<Conn> conn_;
  std::chrono::seconds timeout_;
  std::optional<uint64_t> remaining_;
  bool done_ = false;
};

struct Server::Impl {
  Impl(ServerOptions o, const Router& r)
      : options(std::move(o)),
        router(r),
        pool(static_cast<size_t>(std::max(1, options.worker_threads))),
        body_pool(static_cast<size_t>(std::max(1, options.worker_threads))),
        acceptor(ioc),
        signals(ioc),
        grace_timer(ioc),
        id_prefix(RandomHex(3)) {}

  ServerOptions options;
  const Router& router;
  asio::thread_pool pool;  // destroyed after ioc: queued reads fail before workers join
  // Handlers of requests that carry a body: they may wait on a slow client's bytes, so
  // they get their own workers and cannot starve reads (GET/HEAD, /healthz).
  asio::thread_pool body_pool;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer grace_timer;
  std::string id_prefix;
  std::atomic<uint64_t> next_id{1};
  uint16_t port = 0;

  std::mutex mu;  // guards conns
  std::list<std::weak_ptr<Conn>> conns;
  std::atomic<bool> stopping{false};
  std::atomic<int> live{0};

  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Session(std::shared_ptr<Conn> c);
  asio::awaitable<std::optional<uint64_t>> Write(Conn& c, const Request& req, Response& res,
                                                 bool keep_alive);
  asio::awaitable<void> Reject(Conn& c, const Error& e);
  asio::awaitable<std::optional<uint64_t>> SendFile(Conn& c, FileRegion region);
  void BeginStop();
  void ConnDone();
  std::shared_ptr<Request> MakeRequest(const bhttp::request_parser<bhttp::empty_body>& hp,
                                       const Conn& c);
};

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
    if (host.empty()) host = options.host.find(':') != std::string::npos
                                 ? "[" + options.host + "]" : options.host;
    if (!has_port) host += ":" + std::to_string(port);
    req->base_url = "http://" + host;
  }
  return req;
}

asio::awaitable<std::optional<uint64_t>> Server::Impl::Write(Conn& c, const Request& req,
                                                             Response& res, bool keep_alive) {
  auto fill = [&](auto& r) {
    r.result(static_cast<unsigned>(res.status));
    r.version(11);
    for (const auto& [k, v] : res.headers) r.insert(k, v);
    r.keep_alive(keep_alive);
  };
  auto timeout = options.idle_timeout;
  if (req.method == Method::Head) {
    bhttp::response<bhttp::empty_body> r;
    fill(r);
    uint64_t len = res.stream ? res.content_length.value_or(0)
                              : res.content_length.value_or(res.body.size());
    if (res.stream && !res.content_length) {
      r.chunked(true);
    } else {
      r.content_length(len);
    }
    bhttp::response_serializer<bhttp::empty_body> sr(r);
    c.stream.expires_after(timeout);
    auto [ec, n] = co_await bhttp::async_write_header(c.stream, sr, kTuple);
    if (ec) co_return std::nullopt;
    co_return uint64_t{0};
  }
  if (!res.stream) {
    bhttp::response<bhttp::string_body> r;
    fill(r);
    r.body() = std::move(res.body);
    r.prepare_payload();
    uint64_t len = r.body().size();
    c.stream.expires_after(timeout);
    auto [ec, n] = co_await bhttp::async_write(c.stream, r, kTuple);
    if (ec) co_return std::nullopt;
    co_return len;
  }
  bhttp::response<bhttp::buffer_body> r;
  fill(r);
  if (res.content_length) {
    r.content_length(*res.content_length);
  } else {
    r.chunked(true);
  }
  r.body().data = nullptr;
  r.body().more = true;
  bhttp::response_serializer<bhttp::buffer_body> sr(r);
  c.stream.expires_after(timeout);
  {
    auto [ec, n] = co_await bhttp::async_write_header(c.stream, sr, kTuple);
    if (ec) co_return std::nullopt;
  }
  if (auto region = res.stream->Region(); region && res.content_length &&
                                           region->length == *res.content_length) {
    co_return co_await SendFile(c, *region);
  }
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
    if (!known_done) n = co_await OnPool(pool, [&] { return res.stream->Read(window); });
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
    c.stream.expires_after(timeout);
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
    auto which = co_await (sock.async_wait(tcp::socket::wait_write, kTuple) ||
                           timer.async_wait(kTuple));
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
    Log("access")->info("[req {}] {} - - {} 0 0ms", dummy.request_id, c.remote, res.status);
  }
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
    // A malformed or oversized head, or framing we do not accept (RFC 9112 §6.3: a
    // transfer coding other than a final chunked; §3.2: one Host for HTTP/1.1), still gets
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
    } else if (hp.get().count(bhttp::field::transfer_encoding) && !hp.chunked()) {
      reject = MakeError(ErrorCode::BadRequest, "unsupported Transfer-Encoding (only chunked)");
    } else if (hp.get().version() >= 11 && hp.get().count(bhttp::field::host) != 1) {
      reject = MakeError(ErrorCode::BadRequest, "an HTTP/1.1 request needs exactly one Host");
    } else if (!ValidHost(hp.get()[bhttp::field::host])) {
      // Host goes into absolute URLs (Link, LFS hrefs): only a host[:port] may.
      reject = MakeError(ErrorCode::BadRequest, "invalid Host header");
    }
    if (reject) co_await Reject(*c, *reject);
    if (ec || reject) break;
    auto start = std::chrono::steady_clock::now();
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
    if (c->body_parser->is_done()) {
      req->body = std::make_shared<StringSource>("");
    } else {
      req->body = std::make_shared<SocketBodySource>(c, options.idle_timeout,
                                                     req->ContentLength());
    }
    asio::thread_pool& handler_pool = c->body_parser->is_done() ? pool : body_pool;
    Response res = co_await OnPool(handler_pool, [&] {
      Response r = router.Dispatch(*req);
      // A small streamed body is read here, in the same worker hop as the handler.
      if (r.stream && r.content_length && *r.content_length <= kInlineBody &&
          req->method != Method::Head) {
        auto all = ReadAll(*r.stream, kInlineBody);
        if (all && all->size() == *r.content_length) {
          r.body = std::move(*all);
          r.stream.reset();
          r.content_length.reset();
        }
      }
      return r;
    });
    // Body bytes the handler left unread make the connection unusable for the next request.
    bool body_consumed = c->BodyDone() && !c->body_failed;
    bool keep = client_keep_alive && !res.close && !stopping && body_consumed;
    auto sent = co_await Write(*c, *req, res, keep);
    res.stream.reset();
    if (options.access_log) {
      auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
      Log("access")->info("[req {}] {} {} {} {} {} {:.2f}ms {}", req->request_id, req->remote,
                          req->method_name, req->target, res.status, sent ? *sent : 0, ms,
                          req->principal.anonymous ? "-" : req->principal.name);
    }
    req->body.reset();
    unread_body = sent && !body_consumed;
    if (!sent || !keep) break;
  }
  beast::error_code ignored;
  if (unread_body) {
    // Lingering close: closing with request bytes still unread makes the kernel send a
    // RST, which can destroy the answer (say a 400 for an oversized upload) before the
    // client reads it. Stop sending, then discard what still arrives, briefly and boundedly.
    c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    char sink[16384];
    c->stream.expires_after(kLingerTime);  // for the whole drain, not per read
    for (size_t drained = 0; drained < kLingerBytes;) {
      auto [ec, n] = co_await c->stream.async_read_some(asio::buffer(sink), kTuple);
      if (ec) break;
      drained += n;
    }
  }
  c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
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
      continue;  // e.g. EMFILE: keep serving the others
    }
    beast::error_code ignored;
    sock.set_option(tcp::no_delay(true), ignored);
    auto c = std::make_shared<Conn>(std::move(sock));
    auto ep = c->stream.socket().remote_endpoint(ignored);
    c->remote = ep.address().to_string() + ":" + std::to_string(ep.port());
    {
      std::lock_guard lock(mu);
      conns.remove_if([](const std::weak_ptr<Conn>& w) { return w.expired(); });
      conns.push_back(c);
    }
    ++live;
    asio::co_spawn(c->stream.get_executor(), Session(c), asio::detached);
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

Server::~Server() {
  impl_->ioc.stop();
}

Result<uint16_t> Server::Listen() {
  auto& i = *impl_;
  beast::error_code ec;
  auto addr = asio::ip::make_address(i.options.host, ec);
  if (ec) return MakeError(ErrorCode::BadRequest, "invalid listen address '" + i.options.host + "'");
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
  int n = i.options.io_threads > 0 ? i.options.io_threads
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
  i.pool.join();
  i.body_pool.join();
}

void Server::Stop() {
  asio::post(impl_->ioc, [this] { impl_->BeginStop(); });
}

}  // namespace hangar::http

#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sys/resource.h>
#include <sys/sendfile.h>
#include <algorithm>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/log.h"
#include "core/memory_budget.h"
#include "core/util.h"

namespace hangar::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
// Lingering close after an answer that left request bytes unread: read and drop at most
// this much, for at most this long in all.
constexpr size_t kLingerBytes = size_t{8} << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kStreamChunk = 256 * 1024;  // response chunk read per worker hand-off
constexpr size_t kBodyReadSize = 64 * 1024;  // socket read size for chunked request bodies
constexpr size_t kBodyBatch = 1 << 20;       // request bytes gathered per worker hand-off
constexpr uint64_t kInlineBody = 64 * 1024;  // streamed responses up to this are read at once
// What the connection buffer may hold beyond a request head: a few socket reads of chunked
// body with its framing (a chunk-size line, extensions included, must fit in it).
constexpr size_t kFramingSlack = 4 * kBodyReadSize;

// A Host header value that is a plain host[:port] or [v6]:port (or absent).
bool ValidHost(std::string_view h) {
  for (char ch : h) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '-' || ch == ':' || ch == '[' || ch == ']' || ch == '_';
    if (!ok) return false;
  }
  return h.size() <= 255;
}

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

namespace {

// How many things (connections, bodies) each key (a client IP, a principal) holds, against
// a limit. Thread-safe.
class PerKeyCounter {
 public:
  // Takes one for `key`; false (nothing taken) when it holds `limit` already (0 = no limit).
  bool TryAcquire(const std::string& key, int limit) {
    std::lock_guard lock(mu_);
    auto [it, fresh] = counts_.try_emplace(key, 0);
    if (limit > 0 && it->second >= limit) return false;
    ++it->second;
    return true;
  }
  void Release(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = counts_.find(key);
    if (it != counts_.end() && --it->second <= 0) counts_.erase(it);
  }

 private:
  std::mutex mu_;  // guards counts_
  std::unordered_map<std::string, int> counts_;
};

// One unit of a PerKeyCounter, given back when this goes.
class PerKeySlot {
 public:
  PerKeySlot() = default;
  PerKeySlot(PerKeyCounter& counter, std::string key) : counter_(&counter), key_(std::move(key)) {}
  PerKeySlot(PerKeySlot&& o) noexcept
      : counter_(std::exchange(o.counter_, nullptr)), key_(std::move(o.key_)) {}
  PerKeySlot& operator=(PerKeySlot&& o) noexcept {
    std::swap(counter_, o.counter_);
    std::swap(key_, o.key_);
    return *this;
  }
  ~PerKeySlot() {
    if (counter_) counter_->Release(key_);
  }
  explicit operator bool() const { return counter_ != nullptr; }  // holds a unit

 private:
  PerKeyCounter* counter_ = nullptr;
  std::string key_;
};

// Body bytes read ahead of the handler; their charges go back with them: to the global
// budget, and for an unauthenticated caller to the share all such callers have together
// and to its IP's count of read-ahead steps.
struct BodyBuffer {
  explicit BodyBuffer(MemoryBudget& b) : budget(b) {}
  ~BodyBuffer() {
    budget.Release(charged);
    if (anonymous_budget) anonymous_budget->Release(anonymous_charged);
    for (int i = 0; i < ip_steps; ++i) ip_counter->Release(ip);
  }
  BodyBuffer(const BodyBuffer&) = delete;
  BodyBuffer& operator=(const BodyBuffer&) = delete;
  MemoryBudget& budget;
  std::string data;                          // the bytes read (size() of them)
  uint64_t charged = 0;                      // bytes of the budget held (>= the memory `data` uses)
  MemoryBudget* anonymous_budget = nullptr;  // set for unauthenticated callers
  uint64_t anonymous_charged = 0;            // bytes of it held
  PerKeyCounter* ip_counter = nullptr;       // with `ip`: steps held by that IP
  std::string ip;
  int ip_steps = 0;
};

// Threads for handlers that read a body still arriving or may wait in a queue
// (Requirement::Waits): each gets a thread of its own, so a slow client or a long queue
// parks that thread, never one of the shared workers. At most `limit` at once. Thread-safe.
class BodyThreads {
 public:
  // `fallback`: where a job runs when the system cannot make a thread.
  BodyThreads(int limit, asio::thread_pool& fallback) : limit_(limit), fallback_(fallback) {}
  // Takes a place for one thread; false when `limit` are taken.
  bool TryReserve() {
    std::lock_guard lock(mu_);
    if (running_ >= limit_) return false;
    ++running_;
    return true;
  }
  // Runs job() on a new thread, in a place TryReserve took (given back when it ends).
  template <typename Job>
  void Start(Job job) {
    auto held = std::make_shared<Job>(std::move(job));
    try {
      std::thread([this, held] {
        (*held)();
        Done();
      }).detach();
    } catch (const std::system_error& e) {
      Log("http")->warn("cannot start a body thread ({}); using the shared pool", e.what());
      Done();
      asio::post(fallback_, [held] { (*held)(); });
    }
  }
  // Waits until every thread has ended.
  void Join() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return running_ == 0; });
  }
  int limit() const { return limit_; }

 private:
  void Done() {
    std::lock_guard lock(mu_);
    if (--running_ == 0) idle_.notify_all();
  }
  const int limit_;
  asio::thread_pool& fallback_;
  std::mutex mu_;  // guards running_
  std::condition_variable idle_;
  int running_ = 0;
};

}  // namespace

// One client connection. Its operations run on a strand (stream's executor).
struct Conn {
  Conn(tcp::socket s, const ServerOptions& o)
      : stream(std::move(s)),
        buffer(o.max_header_bytes + kFramingSlack),
        body_timer(stream.get_executor()),
        options(o) {}
  beast::tcp_stream stream;
  // The head, then chunked framing and the body bytes read with it. Bounded: a chunk-size
  // line with endless extensions ends in a 400, not in unbounded memory.
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
  std::string ip;              // the peer's address, e.g. "127.0.0.1" (per-IP limits)
  std::string remote;          // "ip:port"
  PerKeySlot ip_slot;          // this connection's place in the per-IP connection count

  // The body rules (ServerOptions): a body read waits at most until the earliest of its
  // total deadline, the end of the current rate window and the idle timeout. The rate
  // window runs only while a read is waiting, so time the handler spends between reads is
  // never held against the client, and a trickled byte does not restart any timer.
  enum class Expiry { None, Rate, Total, Idle };
  asio::steady_timer body_timer;
  uint64_t read_gen = 0;          // tells the timer's firing for this read from a stale one
  Expiry expired = Expiry::None;  // why the timer cancelled the current read
  Clock::time_point body_deadline = Clock::time_point::max();
  Clock::duration window_waited{};  // time spent waiting for bytes in this rate window
  uint64_t window_bytes = 0;        // body bytes received in it
  const ServerOptions& options;

  // Starts the clocks of a new request's body.
  void BeginBody() {
    body_deadline = options.body_time_limit.count() > 0 ? Clock::now() + options.body_time_limit
                                                        : Clock::time_point::max();
    window_waited = {};
    window_bytes = 0;
  }
  // When the next body read must give up, and why.
  std::pair<Clock::time_point, Expiry> NextDeadline(Clock::time_point now) const {
    std::pair<Clock::time_point, Expiry> out{body_deadline, Expiry::Total};
    if (now + options.idle_timeout < out.first) out = {now + options.idle_timeout, Expiry::Idle};
    if (options.min_body_rate > 0) {
      auto rest = std::max<Clock::duration>(options.body_rate_window - window_waited, {});
      if (now + rest <= out.first) out = {now + rest, Expiry::Rate};
    }
    return out;
  }
  // Counts a read of `n` bytes that waited `waited`; a window whose quota is met restarts.
  void CountBodyRead(uint64_t n, Clock::duration waited) {
    window_waited += waited;
    window_bytes += n;
    uint64_t quota =
        options.min_body_rate * static_cast<uint64_t>(options.body_rate_window.count());
    if (window_bytes >= quota) {
      window_waited = {};
      window_bytes = 0;
    }
  }
  // The error for a read the body timer cut off.
  Error ExpiryError() const {
    switch (expired) {
      case Expiry::Rate:
        return MakeError(ErrorCode::RequestTimeout,
                         "request body too slow: " + std::to_string(window_bytes) + " bytes in " +
                             std::to_string(options.body_rate_window.count()) +
                             " s, below the minimum of " + std::to_string(options.min_body_rate) +
                             " bytes/s (limits.min_body_rate)");
      case Expiry::Total:
        return MakeError(ErrorCode::RequestTimeout,
                         "request body not complete within " +
                             std::to_string(options.body_time_limit.count()) +
                             " s (limits.body_time_limit_s)");
      default:
        return MakeError(
            ErrorCode::RequestTimeout,
            "no request body bytes for " + std::to_string(options.idle_timeout.count()) + " s");
    }
  }
};

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

struct Server::Impl {
  Impl(ServerOptions o, const Router& r)
      : options(std::move(o)),
        router(r),
        pool(static_cast<size_t>(std::max(1, options.worker_threads))),
        body_threads(std::max(1, options.streaming_bodies), pool),
        acceptor(ioc),
        signals(ioc),
        grace_timer(ioc),
        accept_backoff(ioc),
        id_prefix(RandomHex(3)),
        budget(options.body_memory_bytes, "limits.body_memory_bytes"),
        anonymous_budget(options.body_memory_bytes / 2, "half of limits.body_memory_bytes"),
        handler_memory(options.handler_memory_bytes, "limits.handler_memory_bytes") {}

  ServerOptions options;
  const Router& router;
  asio::thread_pool pool;  // destroyed after ioc: queued reads fail before workers join
  // Handlers of requests whose body is larger than the read-ahead: they may wait on the
  // client's bytes, so each gets a thread of its own and cannot starve the others.
  BodyThreads body_threads;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer grace_timer;
  asio::steady_timer accept_backoff;  // the pause after a failed accept
  std::string id_prefix;
  std::atomic<uint64_t> next_id{1};
  uint16_t port = 0;

  std::mutex mu;  // guards conns
  std::list<std::weak_ptr<Conn>> conns;
  std::atomic<bool> stopping{false};
  std::atomic<int> live{0};
  MemoryBudget budget;            // the I/O layer's read-ahead buffers
  MemoryBudget anonymous_budget;  // the part of `budget` unauthenticated callers may hold
  MemoryBudget handler_memory;    // what handlers on their own threads keep (Request::body_memory)
  PerKeyCounter anonymous_steps;  // read-ahead steps (up to kBodyReadSize) held, by IP
  PerKeyCounter conns_per_ip;
  PerKeyCounter anonymous_bodies;        // by client IP
  PerKeyCounter streaming_by_principal;  // by "user <name>" or a Request::quota_key

  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Session(std::shared_ptr<Conn> c);
  // Admits a request that has a body, reads the body ahead, runs the handler.
  asio::awaitable<Response> ServeWithBody(std::shared_ptr<Conn> c, Request& req);
  // Runs the admitted handler on a thread of its own (body_threads): one that reads a body
  // still arriving, or may wait in a queue. 503 when limits.streaming_bodies run already.
  asio::awaitable<Response> RunOnOwnThread(const Admission& admission, Request& req);
  // Reads the body ahead of the handler into a buffer charged to the budget: up to `cap`
  // bytes, or to its end. Errors: those of ReadSomeBody; Unavailable (budget, or the
  // unauthenticated callers' share of it), TooManyRequests (one IP's share).
  // `anonymous`: the caller has no identity (see BodyBuffer for its shares).
  asio::awaitable<Result<std::unique_ptr<BodyBuffer>>> ReadAhead(std::shared_ptr<Conn> c,
                                                                 size_t cap, bool anonymous);
  // Takes `n` bytes of the budget, waiting up to body_memory_wait. Errors: Unavailable.
  asio::awaitable<Result<void>> Charge(Conn& c, uint64_t n);
  // Refuses a connection over the per-IP limit: a 429, then a lingering close.
  asio::awaitable<void> RefuseConn(std::shared_ptr<Conn> c);
  // Lingering close: see Session.
  asio::awaitable<void> Linger(Conn& c);
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
    if (host.empty())
      host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
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
    uint64_t len =
        res.stream ? res.content_length.value_or(0) : res.content_length.value_or(res.body.size());
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
  if (auto region = res.stream->Region();
      region && res.content_length && region->length == *res.content_length) {
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
    Log("access")->info("[req {}] {} - - {} 0 0ms", dummy.request_id, c.remote, res.status);
  }
}

// RFC 9112 §6.1: a Transfer-Encoding we can decode is exactly one "chunked"; anything
// else (say "gzip, chunked") would hand the handler bytes it cannot read, so it gets 400.
static bool OnlyChunked(const bhttp::request_parser<bhttp::empty_body>& hp) {
  const auto& h = hp.get();
  if (h.count(bhttp::field::transfer_encoding) != 1) return false;
  std::string_view v = h[bhttp::field::transfer_encoding];
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return beast::iequals(v, "chunked");
}

// A small streamed response body is read at once, in the handler's worker hop.
static void InlineSmallStream(Response& r, const Request& req) {
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

#pragma once
// Internal to http/: what server.cc (every coroutine: connections, heads, bodies,
// responses, the accept loop), server_conn.cc (the connection's and the limits' plain
// code) and server_control.cc (listening and stopping) share. Beast and Asio stay behind
// this header; nothing outside src/http/ includes it.
//
// Every coroutine, and every call of asio::co_spawn (which instantiates Asio's own), stays
// in server.cc: clang 14 fails on coroutines instantiated in more than one file ("Cannot
// represent a difference across sections"), which the fuzz and sanitizer builds use.

#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
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
bool ValidHost(std::string_view h);
// RFC 9112 §6.1: a Transfer-Encoding we can decode is exactly one "chunked"; anything
// else (say "gzip, chunked") would hand the handler bytes it cannot read, so it gets 400.
bool OnlyChunked(const bhttp::request_parser<bhttp::empty_body>& hp);
// Why a request head read with `ec` gets a refusal before the close: a malformed or
// oversized head, or framing we do not accept (RFC 9112 §6.1: a transfer coding other
// than exactly chunked; §3.2: one Host for HTTP/1.1); nullopt when it is fine or the
// client just went away.
std::optional<Error> HeadProblem(const beast::error_code& ec,
                                 const bhttp::request_parser<bhttp::empty_body>& hp);
// A small streamed response body is read at once, in the handler's worker hop.
void InlineSmallStream(Response& r, const Request& req);

// The status line and headers of `res` on the Beast response `r`.
template <typename BeastResponse>
void FillHead(BeastResponse& r, const Response& res, bool keep_alive) {
  r.result(static_cast<unsigned>(res.status));
  r.version(11);
  for (const auto& [k, v] : res.headers) r.insert(k, v);
  r.keep_alive(keep_alive);
}

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
// parks that thread, never one of the shared workers. At most `limit` at once. A thread
// whose job ended waits kIdle for the next one before it exits, so a steady stream of such
// requests (the gateway's) does not pay a thread's creation each. Thread-safe.
class BodyThreads {
 public:
  static constexpr std::chrono::seconds kIdle{10};
  // `fallback`: where a job runs when the system cannot make a thread.
  BodyThreads(int limit, asio::thread_pool& fallback) : limit_(limit), fallback_(fallback) {}
  ~BodyThreads() { Join(); }
  // Takes a place for one thread; false when `limit` are taken.
  bool TryReserve() {
    std::lock_guard lock(mu_);
    if (running_ >= limit_) return false;
    ++running_;
    return true;
  }
  // Runs job() on a thread of its own (an idle one, or a new one), in a place TryReserve
  // took (given back when it ends).
  template <typename Job>
  void Start(Job job) {
    // std::function needs a copyable callable; the job (an asio handler) may be move-only.
    std::function<void()> fn = [held = std::make_shared<Job>(std::move(job))] { (*held)(); };
    std::unique_lock lock(mu_);
    if (idle_ > 0) {
      --idle_;  // that thread is this job's: a second job meanwhile gets another
      jobs_.push_back(std::move(fn));
      lock.unlock();
      work_.notify_one();
      return;
    }
    ++threads_;
    lock.unlock();
    auto first = std::make_shared<std::function<void()>>(std::move(fn));
    try {
      std::thread([this, first] { Loop(std::move(*first)); }).detach();
    } catch (const std::system_error& e) {
      Log("http")->warn("cannot start a body thread ({}); using the shared pool", e.what());
      {
        std::lock_guard relock(mu_);
        --threads_;
      }
      asio::post(fallback_, [this, first] {
        (*first)();
        Done();
      });
    }
  }
  // Gives back a place TryReserve took without Start (a thread its holder made itself).
  void Release() { Done(); }
  // Waits until every job has ended, then lets the idle threads go and waits for them.
  void Join() {
    std::unique_lock lock(mu_);
    idle_cv_.wait(lock, [this] { return running_ == 0; });
    stopping_ = true;
    work_.notify_all();
    idle_cv_.wait(lock, [this] { return threads_ == 0; });
  }
  int limit() const { return limit_; }

 private:
  void Loop(std::function<void()> job) {
    for (;;) {
      job();
      Done();
      std::unique_lock lock(mu_);
      ++idle_;
      work_.wait_for(lock, kIdle, [this] { return !jobs_.empty() || stopping_; });
      // A job handed over was counted off idle_ by Start; leaving, count self off.
      if (jobs_.empty()) {
        --idle_;
        if (--threads_ == 0) idle_cv_.notify_all();
        return;
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
  }
  void Done() {
    std::lock_guard lock(mu_);
    if (--running_ == 0) idle_cv_.notify_all();
  }
  const int limit_;
  asio::thread_pool& fallback_;
  std::mutex mu_;  // guards the counts and jobs_
  std::condition_variable idle_cv_, work_;
  int running_ = 0;  // places taken
  int threads_ = 0;  // threads alive (running a job or idle)
  int idle_ = 0;     // threads waiting for a job and not yet handed one
  bool stopping_ = false;
  std::deque<std::function<void()>> jobs_;  // handed to idle threads
};

// Where WriteStream reads a response stream: on the shared pool, or, for one that may wait
// long on a peer (Response::stream_waits), on a thread of its own in a place of `places`
// when one is free. The thread ends (idle, joined) with this object.
class StreamReader {
 public:
  StreamReader(BodyThreads& places, asio::thread_pool& shared, bool waits)
      : places_(places), shared_(shared) {
    if (waits && places_.TryReserve()) own_.emplace(1);
  }
  ~StreamReader() {
    if (!own_) return;
    own_.reset();
    places_.Release();
  }
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;
  asio::thread_pool& pool() { return own_ ? *own_ : shared_; }

 private:
  BodyThreads& places_;
  asio::thread_pool& shared_;
  std::optional<asio::thread_pool> own_;
};

// What a request with a body holds while it runs (Server::Impl::TakeBodyPlaces).
struct BodyPlaces {
  bool anonymous = false;  // no identity after admission
  bool capped = false;     // the body must fit the read-ahead
  std::string quota_key;   // whose large bodies it counts to; "" = not counted
  PerKeySlot anonymous_slot;
  PerKeySlot principal_slot;
};

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

  // Takes over the parser of a request head just read, for reading its body: Content-Length
  // framing reads raw from the socket, chunked through the parser (server_conn.cc).
  void TakeHead(bhttp::request_parser<bhttp::empty_body>&& head, bool expect_continue);
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

  // Defined in server.cc: it hands the read to the connection's strand.
  Result<size_t> Read(std::span<char> buf) override;

  std::optional<uint64_t> Size() const override { return remaining_; }

 private:
  // Fills up to kBodyBatch bytes of `buf` per hand-off to the worker thread (server.cc).
  static asio::awaitable<void> Fill(std::shared_ptr<Conn> c, std::span<char> buf,
                                    std::shared_ptr<std::promise<Result<size_t>>> p);

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
        drain_timer(ioc),
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
  asio::steady_timer drain_timer;     // ServerOptions::drain_delay
  asio::steady_timer accept_backoff;  // the pause after a failed accept
  std::string id_prefix;
  std::atomic<uint64_t> next_id{1};
  uint16_t port = 0;

  std::mutex mu;  // guards conns
  std::list<std::weak_ptr<Conn>> conns;
  std::atomic<bool> draining{false};  // a stop began: answers close their connections
  std::atomic<bool> stopping{false};  // no longer accepting; in-flight requests finishing
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
  // `anonymous`: the caller has no checked credential, not even a ticket (BodyBuffer: shares).
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
  // Write's three shapes: headers only (HEAD), a body in memory, a streamed body.
  asio::awaitable<std::optional<uint64_t>> WriteHead(Conn& c, Response& res, bool keep_alive);
  asio::awaitable<std::optional<uint64_t>> WriteWhole(Conn& c, Response& res, bool keep_alive);
  asio::awaitable<std::optional<uint64_t>> WriteStream(Conn& c, const Request& req, Response& res,
                                                       bool keep_alive);

  // The rest is plain code (server_conn.cc, server_control.cc): no coroutine is defined
  // outside server.cc, since clang 14 cannot build coroutines split across files.
  // The stop's first phase (on_drain, then drain_delay), then StopAccepting.
  void BeginStop();
  void StopAccepting();
  void ConnDone();
  std::shared_ptr<Request> MakeRequest(const bhttp::request_parser<bhttp::empty_body>& hp,
                                       const Conn& c);
  // The body limits a request is held to before its body is read (ServeWithBody): takes
  // its places in the counts of bodies in flight, or returns the refusal.
  std::optional<Error> TakeBodyPlaces(const Conn& c, const Request& req, const Admission& admission,
                                      BodyPlaces& places);
  // A place in the large bodies of places.quota_key; false when it holds them all.
  bool TakePrincipalPlace(BodyPlaces& places);
  // The refusal when TakePrincipalPlace fails.
  Error TooManyBodies(const BodyPlaces& places) const;
  // `e` rendered in the admitted route's family, with the request id.
  Response Refuse(const Admission& admission, const Error& e, const Request& req) const;
  // The access log line of one exchange (options.access_log).
  void LogAccess(const Request& req, const Response& res, std::optional<uint64_t> sent,
                 Clock::time_point start) const;
};

}  // namespace hangar::http

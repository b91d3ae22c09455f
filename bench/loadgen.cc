// hangar-loadgen: a fixed-rate (open-loop) HTTP/1.1 load generator.
//
// Requests are scheduled at fixed instants t0 + i/R, independent of how fast the
// server answers. Each request's latency is counted from its *scheduled* send time,
// not from the moment a connection became free to send it, so a server that stalls
// is charged for every request that piled up behind the stall (no "coordinated
// omission", the flaw closed-loop tools such as wrk have; wrk2 does the same as this,
// but Debian does not package wrk2). The time from actual send to response is reported
// separately as "service time".
//
// One thread, epoll, N keep-alive connections, one request in flight per connection
// (no pipelining). A request due while every connection is busy waits in a queue and
// its wait counts in its latency.
//
// Safety: the target must be a loopback address (127.0.0.0/8 or "localhost"); runs are
// bounded by --duration (plus --drain for in-flight requests) and by --rate * --duration
// requests in all.
//
//   hangar-loadgen -R 5000 -d 10 -c 64 -m HEAD http://127.0.0.1:8080/u/x/resolve/main/f
//   options: -R rate/s  -d seconds  -c connections  -m method  -H 'Name: value' (repeat)
//            -w warmup seconds (sent but not counted)  --drain seconds  --timeout seconds
//            --json (one JSON object on stdout instead of the text report)
//            --paths FILE (one request path per line, sent in turn instead of the URL's
//            path: random offsets of the dataset viewer's /rows, say)

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Nanos = int64_t;

Nanos Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "hangar-loadgen: %s\n", msg.c_str());
  std::exit(2);
}

struct Options {
  double rate = 1000;
  double duration = 10;
  double warmup = 0;
  double drain = 5;
  double timeout = 10;
  int connections = 32;
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string url;
  bool json = false;
  std::string paths_file;  // --paths: request targets, one per line
  // Parsed from url.
  std::string host_header;
  sockaddr_in addr{};
  std::string target;
};

void Usage() {
  std::fprintf(stderr,
               "usage: hangar-loadgen [-R rate] [-d seconds] [-c connections] [-m METHOD]\n"
               "                      [-H 'Name: value']... [-w warmup_s] [--drain s]\n"
               "                      [--timeout s] [--json] http://127.0.0.1:PORT/path\n");
  std::exit(2);
}

void ParseUrl(Options& o) {
  std::string_view u = o.url;
  constexpr std::string_view kScheme = "http://";
  if (u.substr(0, kScheme.size()) != kScheme) Die("only http:// URLs are supported");
  u.remove_prefix(kScheme.size());
  size_t slash = u.find('/');
  std::string_view authority = u.substr(0, slash);
  o.target = slash == std::string_view::npos ? "/" : std::string(u.substr(slash));
  o.host_header = std::string(authority);
  size_t colon = authority.rfind(':');
  std::string host(authority.substr(0, colon));
  int port = 80;
  if (colon != std::string_view::npos)
    port = std::atoi(std::string(authority.substr(colon + 1)).c_str());
  if (port <= 0 || port > 65535) Die("bad port in URL");
  if (host == "localhost") host = "127.0.0.1";
  o.addr.sin_family = AF_INET;
  o.addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &o.addr.sin_addr) != 1)
    Die("host must be an IPv4 literal or localhost: " + host);
  // Load is only ever sent to this machine.
  if ((ntohl(o.addr.sin_addr.s_addr) >> 24) != 127) Die("refusing non-loopback target " + host);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage();
      return argv[++i];
    };
    if (a == "-R" || a == "--rate")
      o.rate = std::atof(next().c_str());
    else if (a == "-d" || a == "--duration")
      o.duration = std::atof(next().c_str());
    else if (a == "-c" || a == "--connections")
      o.connections = std::atoi(next().c_str());
    else if (a == "-m" || a == "--method")
      o.method = next();
    else if (a == "-H" || a == "--header")
      o.headers.push_back(next());
    else if (a == "-w" || a == "--warmup")
      o.warmup = std::atof(next().c_str());
    else if (a == "--drain")
      o.drain = std::atof(next().c_str());
    else if (a == "--timeout")
      o.timeout = std::atof(next().c_str());
    else if (a == "--json")
      o.json = true;
    else if (a == "--paths")
      o.paths_file = next();
    else if (a == "-h" || a == "--help")
      Usage();
    else if (!a.empty() && a[0] == '-')
      Die("unknown option " + a);
    else
      o.url = a;
  }
  if (o.url.empty()) Usage();
  if (o.rate <= 0 || o.rate > 200000) Die("rate must be in (0, 200000]");
  if (o.duration <= 0 || o.duration > 600) Die("duration must be in (0, 600] seconds");
  if (o.warmup < 0 || o.warmup >= o.duration) Die("warmup must be in [0, duration)");
  if (o.connections < 1 || o.connections > 10000) Die("connections must be in [1, 10000]");
  ParseUrl(o);
  return o;
}

// Incremental HTTP/1.1 response parser. Bodies are counted, never stored.
class ResponseParser {
 public:
  enum class Step { kNeedMore, kDone, kError };

  void Reset(bool head_request) {
    head_ = head_request;
    state_ = State::kHead;
    buf_.clear();
    status_ = 0;
    remaining_ = 0;
    close_ = false;
  }
  int status() const { return status_; }
  bool close_after() const { return close_; }
  bool reads_to_eof() const { return state_ == State::kUntilEof; }

  // Consumes bytes from data; sets *used to how many were consumed.
  Step Feed(const char* data, size_t n, size_t* used) {
    size_t i = 0;
    while (i < n || state_ == State::kDoneState) {
      switch (state_) {
        case State::kHead: {
          size_t old = buf_.size();
          buf_.append(data + i, n - i);
          size_t end = buf_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
          if (end == std::string::npos) {
            if (buf_.size() > 64 * 1024) return Step::kError;
            i = n;
            break;
          }
          size_t head_len = end + 4;
          i += head_len - old;
          if (!ParseHead(buf_.substr(0, head_len))) return Step::kError;
          buf_.clear();
          break;
        }
        case State::kBody: {
          size_t take = std::min<uint64_t>(remaining_, n - i);
          remaining_ -= take;
          i += take;
          if (remaining_ == 0) state_ = State::kDoneState;
          break;
        }
        case State::kUntilEof:
          i = n;
          break;
        case State::kChunkSize: {
          // Reads the hex size line, byte by byte through buf_.
          while (i < n) {
            char c = data[i++];
            buf_.push_back(c);
            if (c == '\n') break;
            if (buf_.size() > 1024) return Step::kError;
          }
          if (buf_.empty() || buf_.back() != '\n') break;
          char* endp = nullptr;
          unsigned long long sz = std::strtoull(buf_.c_str(), &endp, 16);
          if (endp == buf_.c_str()) return Step::kError;
          buf_.clear();
          if (sz == 0) {
            state_ = State::kTrailers;
          } else {
            remaining_ = sz;
            state_ = State::kChunkData;
          }
          break;
        }
        case State::kChunkData: {
          size_t take = std::min<uint64_t>(remaining_, n - i);
          remaining_ -= take;
          i += take;
          if (remaining_ == 0) {
            remaining_ = 2;  // CRLF after the chunk
            state_ = State::kChunkCrlf;
          }
          break;
        }
        case State::kChunkCrlf: {
          size_t take = std::min<uint64_t>(remaining_, n - i);
          remaining_ -= take;
          i += take;
          if (remaining_ == 0) state_ = State::kChunkSize;
          break;
        }
        case State::kTrailers: {
          // Trailer lines until an empty line.
          while (i < n) {
            char c = data[i++];
            buf_.push_back(c);
            if (c == '\n') {
              bool empty = buf_ == "\r\n" || buf_ == "\n";
              buf_.clear();
              if (empty) {
                state_ = State::kDoneState;
                break;
              }
            }
          }
          break;
        }
        case State::kDoneState:
          *used = i;
          return Step::kDone;
      }
    }
    *used = i;
    return Step::kNeedMore;
  }

 private:
  enum class State {
    kHead,
    kBody,
    kUntilEof,
    kChunkSize,
    kChunkData,
    kChunkCrlf,
    kTrailers,
    kDoneState
  };

  static bool IEquals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(a[k])) !=
          std::tolower(static_cast<unsigned char>(b[k])))
        return false;
    return true;
  }

  bool ParseHead(const std::string& head) {
    // "HTTP/1.1 200 OK\r\n"
    if (head.size() < 12 || head.compare(0, 5, "HTTP/") != 0) return false;
    status_ = std::atoi(head.c_str() + 9);
    bool http10 = head.compare(0, 8, "HTTP/1.0") == 0;
    close_ = http10;
    bool have_len = false, chunked = false;
    uint64_t len = 0;
    size_t pos = head.find("\r\n") + 2;
    while (pos < head.size()) {
      size_t eol = head.find("\r\n", pos);
      if (eol == std::string::npos || eol == pos) break;
      std::string_view line(head.data() + pos, eol - pos);
      pos = eol + 2;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = line.substr(0, colon);
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
      if (IEquals(name, "content-length")) {
        have_len = true;
        len = std::strtoull(std::string(value).c_str(), nullptr, 10);
      } else if (IEquals(name, "transfer-encoding")) {
        chunked = std::string(value).find("chunked") != std::string::npos;
      } else if (IEquals(name, "connection")) {
        if (IEquals(value, "close")) close_ = true;
        if (IEquals(value, "keep-alive")) close_ = false;
      }
    }
    if (head_ || status_ == 204 || status_ == 304 || (status_ >= 100 && status_ < 200)) {
      state_ = State::kDoneState;
    } else if (chunked) {
      state_ = State::kChunkSize;
    } else if (have_len) {
      remaining_ = len;
      state_ = len == 0 ? State::kDoneState : State::kBody;
    } else {
      close_ = true;
      state_ = State::kUntilEof;
    }
    return true;
  }

  bool head_ = false;
  State state_ = State::kHead;
  std::string buf_;
  int status_ = 0;
  uint64_t remaining_ = 0;
  bool close_ = false;
};

struct Conn {
  int fd = -1;
  bool busy = false;
  Nanos scheduled = 0;  // scheduled send time of the request in flight
  Nanos sent = 0;       // actual send time
  size_t out_off = 0;
  const std::string* request = nullptr;  // the request in flight
  bool want_out = false;
  ResponseParser parser;
};

struct Stats {
  std::vector<double> latency_ms;  // from scheduled send time
  std::vector<double> service_ms;  // from actual send time
  std::map<int, uint64_t> status;
  uint64_t sent = 0;
  uint64_t io_errors = 0;
  uint64_t timeouts = 0;
  uint64_t unfinished = 0;
  uint64_t reconnects = 0;
  uint64_t max_queue = 0;
};

class LoadGen {
 public:
  explicit LoadGen(Options o) : o_(std::move(o)) {
    std::string rest = " HTTP/1.1\r\nHost: " + o_.host_header + "\r\n";
    bool have_ua = false;
    for (const auto& h : o_.headers) {
      rest += h + "\r\n";
      if (strncasecmp(h.c_str(), "user-agent:", 11) == 0) have_ua = true;
    }
    if (!have_ua) rest += "User-Agent: hangar-loadgen\r\n";
    rest += "\r\n";
    std::vector<std::string> targets{o_.target};
    if (!o_.paths_file.empty()) {
      targets.clear();
      std::ifstream in(o_.paths_file);
      for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] == '/') targets.push_back(line);
      if (targets.empty()) Die("no paths (lines starting with '/') in " + o_.paths_file);
    }
    for (const auto& t : targets) requests_.push_back(o_.method + " " + t + rest);
    head_ = o_.method == "HEAD";
    total_ = static_cast<uint64_t>(o_.rate * o_.duration);
    interval_ns_ = 1e9 / o_.rate;
    warmup_count_ = static_cast<uint64_t>(o_.rate * o_.warmup);
  }

  int Run() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake on time, not 50 us late
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    tfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (ep_ < 0 || tfd_ < 0) Die("epoll/timerfd: " + std::string(strerror(errno)));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = UINT64_MAX;
    epoll_ctl(ep_, EPOLL_CTL_ADD, tfd_, &ev);

    conns_.resize(o_.connections);
    warmup_flag_.assign(conns_.size(), 0);
    for (size_t k = 0; k < conns_.size(); ++k) {
      if (!Connect(k)) Die("cannot connect to " + o_.host_header + ": " + strerror(errno));
      idle_.push_back(k);
    }
    stats_.latency_ms.reserve(total_);
    stats_.service_ms.reserve(total_);

    t0_ = Now() + 10'000'000;  // start 10 ms from now
    const Nanos end = t0_ + static_cast<Nanos>(o_.duration * 1e9);
    const Nanos hard_end = end + static_cast<Nanos>(o_.drain * 1e9);
    const Nanos timeout_ns = static_cast<Nanos>(o_.timeout * 1e9);
    uint64_t next = 0;
    int inflight = 0;
    std::vector<epoll_event> events(256);
    while (true) {
      Nanos now = Now();
      while (next < total_ && Sched(next) <= now) {
        queue_.push_back({Sched(next), next < warmup_count_, next});
        ++next;
      }
      stats_.max_queue = std::max<uint64_t>(stats_.max_queue, queue_.size());
      while (!queue_.empty() && !idle_.empty()) {
        size_t k = idle_.back();
        idle_.pop_back();
        Pending p = queue_.front();
        queue_.pop_front();
        if (Send(k, p)) ++inflight;
      }
      if (next >= total_ && queue_.empty() && inflight == 0) break;
      if (now >= hard_end) break;
      // Per-request timeouts.
      for (size_t k = 0; k < conns_.size(); ++k) {
        Conn& c = conns_[k];
        if (c.busy && now - c.sent > timeout_ns) {
          ++stats_.timeouts;
          --inflight;
          Recycle(k, /*reconnect=*/true);
        }
      }
      // Sleep until the next scheduled send (timerfd: ns precision) or an event.
      if (next < total_) {
        itimerspec its{};
        Nanos at = Sched(next);
        its.it_value.tv_sec = at / 1'000'000'000;
        its.it_value.tv_nsec = at % 1'000'000'000;
        timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr);
      }
      int wait_ms = next < total_ ? -1 : 50;
      if (next < total_ && !queue_.empty()) wait_ms = 50;  // backlog: poll timeouts too
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), wait_ms);
      if (n < 0 && errno != EINTR) Die("epoll_wait: " + std::string(strerror(errno)));
      for (int e = 0; e < n; ++e) {
        if (events[e].data.u64 == UINT64_MAX) {
          uint64_t x;
          while (read(tfd_, &x, sizeof x) > 0) {
          }
          continue;
        }
        size_t k = events[e].data.u64;
        Conn& c = conns_[k];
        if (c.fd < 0) continue;
        if ((events[e].events & EPOLLOUT) && c.busy) {
          if (!Flush(k)) {
            ++stats_.io_errors;
            --inflight;
            Recycle(k, true);
            continue;
          }
        }
        if (events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
          int r = OnReadable(k);
          if (r != 0) --inflight;
        }
      }
    }
    stats_.unfinished =
        (total_ - next) + queue_.size() + static_cast<uint64_t>(std::max(inflight, 0));
    for (auto& c : conns_)
      if (c.fd >= 0) close(c.fd);
    Report(Now());
    return 0;
  }

 private:
  struct Pending {
    Nanos scheduled;
    bool warmup;
    uint64_t index;  // which request of the run: picks its path
  };

  Nanos Sched(uint64_t i) const {
    return t0_ + static_cast<Nanos>(static_cast<double>(i) * interval_ns_);
  }

  bool Connect(size_t k) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&o_.addr), sizeof o_.addr) != 0) {
      close(fd);
      return false;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    Conn& c = conns_[k];
    c = Conn{};
    c.fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = k;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    return true;
  }

  // Closes the connection (if reconnect) and returns it to the idle pool.
  void Recycle(size_t k, bool reconnect) {
    Conn& c = conns_[k];
    c.busy = false;
    if (reconnect) {
      if (c.fd >= 0) {
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        close(c.fd);
        c.fd = -1;
      }
      ++stats_.reconnects;
      if (!Connect(k)) {
        ++stats_.io_errors;
        return;  // connection lost for good; not returned to the pool
      }
    }
    idle_.push_back(k);
  }

  bool Send(size_t k, const Pending& p) {
    Conn& c = conns_[k];
    c.busy = true;
    c.scheduled = p.scheduled;
    c.sent = Now();
    c.out_off = 0;
    c.request = &requests_[p.index % requests_.size()];
    c.parser.Reset(head_);
    warmup_flag_[k] = p.warmup;
    ++stats_.sent;
    if (!Flush(k)) {
      ++stats_.io_errors;
      Recycle(k, true);
      return false;
    }
    return true;
  }

  bool Flush(size_t k) {
    Conn& c = conns_[k];
    const std::string& request = *c.request;
    while (c.out_off < request.size()) {
      ssize_t w = send(c.fd, request.data() + c.out_off, request.size() - c.out_off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN) {
          SetWantOut(k, true);
          return true;
        }
        if (errno == EINTR) continue;
        return false;
      }
      c.out_off += static_cast<size_t>(w);
    }
    if (c.want_out) SetWantOut(k, false);
    return true;
  }

  void SetWantOut(size_t k, bool on) {
    Conn& c = conns_[k];
    c.want_out = on;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? static_cast<uint32_t>(EPOLLOUT) : 0u);
    ev.data.u64 = k;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  // Returns 1 if the in-flight request finished (ok or error), 0 otherwise.
  int OnReadable(size_t k) {
    Conn& c = conns_[k];
    char buf[65536];
    while (true) {
      ssize_t r = recv(c.fd, buf, sizeof buf, 0);
      if (r < 0) {
        if (errno == EAGAIN) return 0;
        if (errno == EINTR) continue;
        if (!c.busy) {
          RemoveIdle(k);
          Recycle(k, true);
          return 0;
        }
        ++stats_.io_errors;
        Recycle(k, true);
        return 1;
      }
      if (r == 0) {  // peer closed
        if (c.busy && c.parser.reads_to_eof()) {
          Complete(k);
          Recycle(k, true);
          return 1;
        }
        if (!c.busy) {  // idle keep-alive connection closed by the server
          RemoveIdle(k);
          Recycle(k, true);
          return 0;
        }
        ++stats_.io_errors;
        Recycle(k, true);
        return 1;
      }
      if (!c.busy) continue;  // stray bytes on an idle connection: ignore
      size_t used = 0;
      auto step = c.parser.Feed(buf, static_cast<size_t>(r), &used);
      if (step == ResponseParser::Step::kError) {
        ++stats_.io_errors;
        Recycle(k, true);
        return 1;
      }
      if (step == ResponseParser::Step::kDone) {
        Complete(k);
        Recycle(k, c.parser.close_after());
        return 1;
      }
    }
  }

  void RemoveIdle(size_t k) {
    auto it = std::find(idle_.begin(), idle_.end(), k);
    if (it != idle_.end()) idle_.erase(it);
  }

  void Complete(size_t k) {
    Conn& c = conns_[k];
    Nanos now = Now();
    if (warmup_flag_[k]) return;
    ++stats_.status[c.parser.status()];
    stats_.latency_ms.push_back(static_cast<double>(now - c.scheduled) / 1e6);
    stats_.service_ms.push_back(static_cast<double>(now - c.sent) / 1e6);
  }

  static double Pct(std::vector<double>& v, double p) {
    if (v.empty()) return 0;
    size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size()));
    if (rank >= v.size()) rank = v.size() - 1;
    return v[rank];
  }

  void Report(Nanos finished) {
    auto& lat = stats_.latency_ms;
    auto& svc = stats_.service_ms;
    std::sort(lat.begin(), lat.end());
    std::sort(svc.begin(), svc.end());
    double measured_s = o_.duration - o_.warmup;
    uint64_t completed = lat.size();
    uint64_t ok = 0, bad = 0;
    for (auto [code, n] : stats_.status) (code >= 200 && code < 400 ? ok : bad) += n;
    uint64_t errors = stats_.io_errors + stats_.timeouts + stats_.unfinished + bad;
    double achieved = static_cast<double>(completed) / measured_s;
    (void)finished;
    if (o_.json) {
      std::printf(
          "{\"method\":\"%s\",\"url\":\"%s\",\"rate\":%.1f,\"duration_s\":%.2f,\"warmup_s\":%.2f,"
          "\"connections\":%d,\"sent\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"ok\":%" PRIu64
          ",\"bad_status\":%" PRIu64 ",\"io_errors\":%" PRIu64 ",\"timeouts\":%" PRIu64
          ",\"unfinished\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"reconnects\":%" PRIu64
          ",\"max_queue\":%" PRIu64
          ",\"achieved_rps\":%.1f,"
          "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,"
          "\"svc_p50_ms\":%.3f,\"svc_p99_ms\":%.3f,\"status\":{",
          o_.method.c_str(), o_.url.c_str(), o_.rate, o_.duration, o_.warmup, o_.connections,
          stats_.sent, completed, ok, bad, stats_.io_errors, stats_.timeouts, stats_.unfinished,
          errors, stats_.reconnects, stats_.max_queue, achieved, Pct(lat, 50), Pct(lat, 90),
          Pct(lat, 99), Pct(lat, 99.9), lat.empty() ? 0 : lat.back(), Pct(svc, 50), Pct(svc, 99));
      bool first = true;
      for (auto [code, n] : stats_.status) {
        std::printf("%s\"%d\":%" PRIu64, first ? "" : ",", code, n);
        first = false;
      }
      std::printf("}}\n");
      return;
    }
    std::printf("target      %s %s\n", o_.method.c_str(), o_.url.c_str());
    std::printf("schedule    %.0f req/s for %.1f s (%.1f s warmup not counted), %d connections\n",
                o_.rate, o_.duration, o_.warmup, o_.connections);
    std::printf("requests    %" PRIu64 " sent, %" PRIu64 " completed; errors %" PRIu64
                " (bad status %" PRIu64 ", io %" PRIu64 ", timeout %" PRIu64 ", unfinished %" PRIu64
                "); reconnects %" PRIu64 ", max queue %" PRIu64 "\n",
                stats_.sent, completed, errors, bad, stats_.io_errors, stats_.timeouts,
                stats_.unfinished, stats_.reconnects, stats_.max_queue);
    std::printf("status     ");
    for (auto [code, n] : stats_.status) std::printf(" %d=%" PRIu64, code, n);
    std::printf("\n");
    std::printf("achieved    %.1f req/s\n", achieved);
    std::printf(
        "latency ms  p50=%.3f p90=%.3f p99=%.3f p99.9=%.3f max=%.3f  (from scheduled send time)\n",
        Pct(lat, 50), Pct(lat, 90), Pct(lat, 99), Pct(lat, 99.9), lat.empty() ? 0 : lat.back());
    std::printf("service ms  p50=%.3f p99=%.3f  (from actual send time)\n", Pct(svc, 50),
                Pct(svc, 99));
  }

  Options o_;
  std::vector<std::string> requests_;  // one per path, sent in turn
  bool head_ = false;
  uint64_t total_ = 0;
  uint64_t warmup_count_ = 0;
  double interval_ns_ = 0;
  Nanos t0_ = 0;
  int ep_ = -1;
  int tfd_ = -1;
  std::vector<Conn> conns_;
  std::vector<char> warmup_flag_;
  std::vector<size_t> idle_;
  std::deque<Pending> queue_;
  Stats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  return LoadGen(std::move(o)).Run();
}

#include "net/http_client.h"
#include "core/util.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <tuple>

namespace hangar::net {
namespace {

// curl_global_init is not thread-safe before 7.84; run it once before any handle exists.
void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

bool HasHeader(const HttpRequest& req, std::string_view lower_name) {
  for (const auto& [name, value] : req.headers) {
    if (AsciiLower(name) == lower_name) return true;
  }
  return false;
}

bool SendsBody(const HttpRequest& req) {
  return req.body != nullptr || req.method == "PUT" || req.method == "POST" ||
         req.method == "PATCH" || !req.body_bytes.empty();
}

// A ByteSource over bytes the request owns (HttpRequest::body_bytes).
class ViewSource final : public ByteSource {
 public:
  explicit ViewSource(std::string_view data) : data_(data) {}
  Result<size_t> Read(std::span<char> buf) override {
    size_t n = std::min(buf.size(), data_.size());
    std::memcpy(buf.data(), data_.data(), n);
    data_.remove_prefix(n);
    return n;
  }
  std::optional<uint64_t> Size() const override { return data_.size(); }

 private:
  std::string_view data_;
};

// What the callbacks of one transfer share.
struct Transfer {
  ByteSource* body = nullptr;
  std::optional<ViewSource> bytes_body;
  std::optional<Error> body_error;  // Read() of the request body failed
  std::optional<Error> sink_error;  // the sink refused the response body
  bool follow_redirects = false;
  bool head_done = false;  // the final response's head is complete
  HttpResponse response;
  std::string error_text;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;

  ~Transfer() {
    curl_slist_free_all(headers);
    curl_slist_free_all(resolve);
  }
};

size_t ReadCallback(char* buf, size_t size, size_t nitems, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  auto n = t->body->Read(std::span<char>(buf, size * nitems));
  if (!n) {
    t->body_error = std::move(n).error();
    return CURL_READFUNC_ABORT;
  }
  return *n;
}

size_t HeaderCallback(char* buf, size_t size, size_t nitems, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  std::string_view line(buf, size * nitems);
  if (line.starts_with("HTTP/")) {  // a new response head (after 1xx or a redirect)
    t->response.headers.clear();
    size_t sp = line.find(' ');
    t->response.status = sp == std::string_view::npos ? 0 : std::atol(line.data() + sp + 1);
    return line.size();
  }
  std::string_view trimmed = Trim(line);
  if (trimmed.empty()) {
    long s = t->response.status;
    bool more = s < 200 || (t->follow_redirects && s >= 300 && s < 400 &&
                            t->response.Header("location").has_value());
    if (!more) t->head_done = true;
    return line.size();
  }
  size_t colon = trimmed.find(':');
  if (colon != std::string_view::npos) {
    t->response.headers.emplace_back(AsciiLower(trimmed.substr(0, colon)),
                                     std::string(Trim(trimmed.substr(colon + 1))));
  }
  return line.size();
}

// Applies `req` to `easy` (freshly reset); `t` must outlive the transfer.
Result<void> Setup(CURL* easy, const HttpRequest& req, Transfer& t) {
  if (req.url.empty()) return MakeError(ErrorCode::BadRequest, "HTTP request without a URL");
  curl_easy_setopt(easy, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t.errbuf);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, HeaderCallback);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, req.low_speed_bytes));
  // A stream's own stall bound may be longer than the low-speed abort: it then governs.
  long low_speed_s = static_cast<long>(kLowSpeedAbort.count());
  if (req.stall_timeout.count() > 0)
    low_speed_s =
        std::max<long>(low_speed_s, static_cast<long>(req.stall_timeout.count() / 1000 + 1));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, low_speed_s);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
  if (req.timeout.count() > 0) {
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  }
  if (req.buffer_bytes > 0) {
    long rx = static_cast<long>(std::min<size_t>(req.buffer_bytes, size_t{10} << 20));
    long tx = static_cast<long>(std::min<size_t>(req.buffer_bytes, size_t{2} << 20));
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, rx);
    curl_easy_setopt(easy, CURLOPT_UPLOAD_BUFFERSIZE, tx);
  }
  t.follow_redirects = req.follow_redirects;
  if (req.follow_redirects) {
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
  }

  for (const auto& entry : req.resolve) t.resolve = curl_slist_append(t.resolve, entry.c_str());
  if (t.resolve != nullptr) curl_easy_setopt(easy, CURLOPT_RESOLVE, t.resolve);
  for (const auto& [name, value] : req.headers) {
    t.headers = curl_slist_append(t.headers, (name + ": " + value).c_str());
  }
  // No "Expect: 100-continue" round trip before bodies: the peers are APIs we know. With
  // SigV4, libcurl 7.88 would sign a removal header ("Expect:") it then does not send, so
  // there the header stays and curl just does not wait for the 100.
  if (req.sigv4) {
    curl_easy_setopt(easy, CURLOPT_EXPECT_100_TIMEOUT_MS, 1L);
  } else {
    t.headers = curl_slist_append(t.headers, "Expect:");
  }

  if (req.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (SendsBody(req)) {
    if (req.body != nullptr) {
      t.body = req.body;
    } else {
      t.bytes_body.emplace(req.body_bytes);
      t.body = &*t.bytes_body;
    }
    auto size = t.body->Size();
    if (!size) {
      return MakeError(ErrorCode::BadRequest, "HTTP request body of unknown size");
    }
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);  // PUT unless CUSTOMREQUEST says otherwise
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, ReadCallback);
    curl_easy_setopt(easy, CURLOPT_READDATA, &t);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(*size));
    if (req.method != "PUT") curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  } else if (req.method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }

  if (req.sigv4) {
    if (!HasHeader(req, "x-amz-content-sha256")) {
      t.headers = curl_slist_append(t.headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    }
    std::string provider = "aws:amz:" + req.sigv4->region + ":" + req.sigv4->service;
    curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, provider.c_str());  // curl copies strings
    curl_easy_setopt(easy, CURLOPT_USERNAME, req.sigv4->access_key.c_str());
    curl_easy_setopt(easy, CURLOPT_PASSWORD, req.sigv4->secret_key.c_str());
  } else if (!req.username.empty()) {
    curl_easy_setopt(easy, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(easy, CURLOPT_USERNAME, req.username.c_str());
    curl_easy_setopt(easy, CURLOPT_PASSWORD, req.password.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t.headers);
  return {};
}

// The error for a transfer that ended with `rc`: the body's or sink's own error first.
Error TransferError(const HttpRequest& req, Transfer& t, CURLcode rc) {
  if (t.body_error) return *t.body_error;
  if (t.sink_error) return *t.sink_error;
  std::string detail = t.errbuf[0] != '\0' ? t.errbuf : curl_easy_strerror(rc);
  return MakeError(ErrorCode::Unavailable, req.method + " " + req.url + ": " + detail);
}

}  // namespace

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  std::string lower = AsciiLower(name);
  for (const auto& [n, v] : headers) {
    if (n == lower) return v;
  }
  return std::nullopt;
}

// ---- HttpClient ----

struct HttpClient::Handle {
  CURL* easy = nullptr;
  ~Handle() {
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

HttpClient::HttpClient() : h_(std::make_unique<Handle>()) {
  GlobalInit();
  h_->easy = curl_easy_init();
}

HttpClient::~HttpClient() = default;

namespace {

struct SinkTarget {
  Transfer* t;
  const BodySink* sink;
};

size_t WriteToSink(char* buf, size_t size, size_t nmemb, void* userp) {
  auto* target = static_cast<SinkTarget*>(userp);
  size_t n = size * nmemb;
  if (target->sink == nullptr) {
    target->t->response.body.append(buf, n);
    return n;
  }
  auto r = (*target->sink)(std::span<const char>(buf, n));
  if (!r) {
    target->t->sink_error = std::move(r).error();
    return 0;  // CURLE_WRITE_ERROR
  }
  return n;
}

}  // namespace

Result<HttpResponse> HttpClient::Perform(const HttpRequest& req, const BodySink* sink) {
  if (h_->easy == nullptr) return MakeError(ErrorCode::Internal, "curl_easy_init failed");
  curl_easy_reset(h_->easy);  // keeps the connection cache
  Transfer t;
  HANGAR_TRY(Setup(h_->easy, req, t));
  if (req.stop.stop_possible()) {
    // libcurl calls this about once a second, also while it waits: non-zero aborts.
    auto stopped = [](void* stop, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
      return static_cast<const std::stop_token*>(stop)->stop_requested() ? 1 : 0;
    };
    curl_easy_setopt(h_->easy, CURLOPT_XFERINFOFUNCTION,
                     static_cast<curl_xferinfo_callback>(stopped));
    curl_easy_setopt(h_->easy, CURLOPT_XFERINFODATA, const_cast<std::stop_token*>(&req.stop));
    curl_easy_setopt(h_->easy, CURLOPT_NOPROGRESS, 0L);
  }
  SinkTarget target{&t, sink};
  curl_easy_setopt(h_->easy, CURLOPT_WRITEFUNCTION, WriteToSink);
  curl_easy_setopt(h_->easy, CURLOPT_WRITEDATA, &target);
  CURLcode rc = curl_easy_perform(h_->easy);
  if (rc != CURLE_OK) return TransferError(req, t, rc);
  return std::move(t.response);
}

// ---- HttpStream ----

namespace {

// Kept-alive curl handles of finished streams. A multi handle holds the connection cache,
// so an easy handle goes back with the multi it ran in: the pair reused reuses the
// connection. Bounded; thread-safe.
class StreamHandles {
 public:
  static constexpr size_t kMax = 64;
  ~StreamHandles() {
    for (auto [easy, multi] : free_) Free(easy, multi);
  }
  std::pair<CURL*, CURLM*> Take() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        auto pair = free_.back();
        free_.pop_back();
        return pair;
      }
    }
    return {curl_easy_init(), curl_multi_init()};
  }
  // `easy` is no longer in `multi`.
  void Give(CURL* easy, CURLM* multi) {
    curl_easy_reset(easy);
    {
      std::lock_guard lock(mu_);
      if (free_.size() < kMax) {
        free_.emplace_back(easy, multi);
        return;
      }
    }
    Free(easy, multi);
  }
  static void Free(CURL* easy, CURLM* multi) {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<CURL*, CURLM*>> free_;
};

StreamHandles& Handles() {
  static StreamHandles* handles = new StreamHandles;  // never destroyed: streams may outlive main
  return *handles;
}

}  // namespace

struct HttpStream::State {
  using Clock = std::chrono::steady_clock;
  HttpRequest req;  // owned copy: curl reads the body and strings during the transfer
  Transfer t;
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  std::string buf;  // received, unread bytes start at buf_pos
  size_t buf_pos = 0;
  bool paused = false;
  bool done = false;
  CURLcode result = CURLE_OK;
  uint64_t delivered = 0;
  bool head_seen = false;  // Pump has returned since the head completed

  ~State() {
    if (multi != nullptr && easy != nullptr) curl_multi_remove_handle(multi, easy);
    // Only a transfer that ended well leaves its connection fit for another request.
    if (done && result == CURLE_OK && easy != nullptr && multi != nullptr) {
      Handles().Give(easy, multi);
    } else {
      StreamHandles::Free(easy, multi);
    }
  }

  size_t Unread() const { return buf.size() - buf_pos; }

  static size_t OnWrite(char* data, size_t size, size_t nmemb, void* userp) {
    auto* s = static_cast<State*>(userp);
    if (s->Unread() >= kMaxBuffered) {
      s->paused = true;
      return CURL_WRITEFUNC_PAUSE;  // curl hands the same bytes again after unpausing
    }
    if (s->buf_pos > 0 && s->buf_pos == s->buf.size()) {
      s->buf.clear();
      s->buf_pos = 0;
    }
    s->buf.append(data, size * nmemb);
    return size * nmemb;
  }

  // When waiting for the peer must end (req.stall_timeout from now), or max().
  Clock::time_point Deadline() const {
    if (req.stall_timeout.count() <= 0) return Clock::time_point::max();
    return Clock::now() + req.stall_timeout;
  }

  // Lets curl move data once, waiting up to a second (and at most until `deadline`) for
  // the socket.
  void Pump(Clock::time_point deadline) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        done = true;
        result = msg->data.result;
      }
    }
    // Bytes (or the head) that arrived are the caller's at once: waiting for the socket
    // now would hold them back until the peer's next write (an event stream's next event).
    if (done || running == 0 || paused || Unread() > 0 || (t.head_done && !head_seen)) {
      head_seen = t.head_done;
      return;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    int wait_ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1000));
    curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
  }

  Error Stalled() const {
    return MakeError(ErrorCode::GatewayTimeout, req.method + " " + req.url + ": no answer within " +
                                                    std::to_string(req.stall_timeout.count()) +
                                                    " ms");
  }
};

HttpStream::HttpStream(std::unique_ptr<State> s) : s_(std::move(s)) {}
HttpStream::~HttpStream() = default;

Result<std::unique_ptr<HttpStream>> HttpStream::Open(const HttpRequest& req) {
  GlobalInit();
  auto s = std::make_unique<State>();
  s->req = req;
  std::tie(s->easy, s->multi) = Handles().Take();
  if (s->easy == nullptr || s->multi == nullptr) {
    return MakeError(ErrorCode::Internal, "curl handle creation failed");
  }
  HANGAR_TRY(Setup(s->easy, s->req, s->t));
  curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, State::OnWrite);
  curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s.get());
  curl_multi_add_handle(s->multi, s->easy);
  auto deadline = s->Deadline();
  while (!s->t.head_done && !s->done) {
    if (State::Clock::now() >= deadline) return s->Stalled();
    s->Pump(deadline);
  }
  if (s->done && s->result != CURLE_OK) return TransferError(s->req, s->t, s->result);
  if (!s->t.head_done)  // the peer closed before its head ended: no answer at all
    return MakeError(
        ErrorCode::Unavailable,
        s->req.method + " " + s->req.url + ": the peer closed before its answer's head ended");
  return std::unique_ptr<HttpStream>(new HttpStream(std::move(s)));
}

long HttpStream::Status() const { return s_->t.response.status; }
const HttpResponse& HttpStream::Head() const { return s_->t.response; }

Result<size_t> HttpStream::Read(std::span<char> out) {
  State& s = *s_;
  auto deadline = s.Deadline();
  while (s.Unread() == 0 && !s.done) {
    if (s.paused) {
      s.paused = false;
      curl_easy_pause(s.easy, CURLPAUSE_CONT);  // may deliver bytes right away
      if (s.Unread() > 0) break;
    }
    if (State::Clock::now() >= deadline) return s.Stalled();
    s.Pump(deadline);
  }
  if (s.Unread() == 0) {
    if (s.result != CURLE_OK) return TransferError(s.req, s.t, s.result);
    return size_t{0};
  }
  size_t n = std::min(out.size(), s.Unread());
  std::memcpy(out.data(), s.buf.data() + s.buf_pos, n);
  s.buf_pos += n;
  s.delivered += n;
  if (s.buf_pos == s.buf.size()) {
    s.buf.clear();
    s.buf_pos = 0;
  }
  return n;
}

std::optional<uint64_t> HttpStream::Size() const {
  if (s_->req.method == "HEAD") return 0;
  auto cl = s_->t.response.Header("content-length");
  if (!cl) return std::nullopt;
  uint64_t total = std::strtoull(cl->c_str(), nullptr, 10);
  return total >= s_->delivered ? total - s_->delivered : 0;
}

}  // namespace hangar::net

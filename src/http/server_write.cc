// Responses: heads and bodies written to the connection, files by sendfile(2).

#include <sys/sendfile.h>

#include "http/server_internal.h"

namespace hangar::http {

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

}  // namespace hangar::http

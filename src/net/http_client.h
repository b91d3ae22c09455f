#pragma once
// HttpClient: a blocking HTTP/1.1 client over libcurl easy handles, for Hangar's outgoing
// requests (the S3 blob store, `hangar upload/download`, the OCI client commands).
// HttpStream: one GET whose response body is pulled as a ByteSource, with bounded memory.
// libcurl stays inside src/net/: callers see only the types below.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"

namespace hangar::net {

// AWS Signature Version 4 credentials; the request is signed by libcurl
// (CURLOPT_AWS_SIGV4) with "aws:amz:<region>:<service>".
struct AwsSigV4 {
  std::string region;      // e.g. "us-east-1"
  std::string access_key;  // AWS_ACCESS_KEY_ID
  std::string secret_key;  // AWS_SECRET_ACCESS_KEY
  std::string service = "s3";
};

// One request. Plain data; the pointers it holds must outlive Perform().
struct HttpRequest {
  std::string method = "GET";  // any token; HEAD reads no body
  std::string url;             // absolute http:// or https:// URL, already percent-encoded
  // Sent as given. With `sigv4` none may have an empty value: libcurl 7.88 signs such
  // (removal) headers but does not send them, and the signature then fails.
  std::vector<std::pair<std::string, std::string>> headers;
  // A streamed request body (Content-Length = body->Size(), which must be known), or
  ByteSource* body = nullptr;
  // a small in-memory body. PUT and POST send a body (maybe empty: Content-Length: 0).
  std::string body_bytes;
  // Sign with SigV4. libcurl 7.88 signs `x-amz-content-sha256` only when the caller sets
  // it; when the headers lack it, "UNSIGNED-PAYLOAD" is added.
  std::optional<AwsSigV4> sigv4;
  std::string username, password;        // HTTP Basic when username is set
  std::chrono::milliseconds timeout{0};  // whole transfer; 0 = none (see kLowSpeed below)
  // Perform() only: a stop request aborts the transfer within about a second (libcurl's
  // progress callback), with Unavailable. Default: none.
  std::stop_token stop;
  bool follow_redirects = false;  // follow 3xx Location (at most 10 hops)
  // Addresses to use instead of resolving, as curl's CURLOPT_RESOLVE entries
  // "host:port:addr[,addr…]": a request pinned to addresses checked beforehand
  // (services::ResolveChecked) cannot be sent elsewhere by a second lookup.
  std::vector<std::string> resolve;
  // A transfer slower than this many bytes/s for kLowSpeedAbort (or stall_timeout) is
  // aborted: a peer that trickles bytes cannot hold a caller.
  long low_speed_bytes = 1;
  // libcurl's buffers for this request, in bytes: the receive buffer (the most a sink gets
  // per call; capped at 10 MiB) and the upload buffer (the most a body Read() is asked
  // for; capped at 2 MiB). 0 = libcurl's defaults (16 KiB, 64 KiB). Large transfers
  // (OCI blobs) use ~1 MiB: fewer callbacks and syscalls per byte.
  size_t buffer_bytes = 0;
  // HttpStream only: the most Open() waits for the response head, and Read() for the next
  // bytes of the body; 0 = no bound but kLowSpeedAbort. Past it: GatewayTimeout.
  std::chrono::milliseconds stall_timeout{0};
};

// A response: the status, the headers of the final response and, without a sink, the body.
struct HttpResponse {
  long status = 0;                                           // e.g. 200
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;  // filled only when Perform() was given no sink
  // The first header named `name` (any case), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

// Receives the response body as it arrives. An error aborts the transfer and becomes
// Perform()'s result.
using BodySink = std::function<Result<void>(std::span<const char>)>;

// A transfer that moves fewer than 1 byte/s for this long is aborted (a stalled peer),
// also when HttpRequest::timeout is 0.
inline constexpr std::chrono::seconds kLowSpeedAbort{60};

// A blocking client. One per thread (or taken from a pool): it keeps its connections
// alive between requests and is not thread-safe.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `req` and waits for the whole response. Any HTTP status is a success here: the
  // caller interprets it. The body goes to `sink` when given (with any status), else into
  // HttpResponse::body. Errors: Unavailable with curl's message for transport failures
  // (connect, TLS, timeout, reset); the error of `req.body`'s Read() or of `sink`, as is;
  // BadRequest for a malformed request (no URL, body without a known size).
  Result<HttpResponse> Perform(const HttpRequest& req, const BodySink* sink = nullptr);

 private:
  struct Handle;
  std::unique_ptr<Handle> h_;
};

// A response body pulled on demand: Open() returns once the status and headers of the
// final response are in, and Read() then receives the body as the caller consumes it.
// libcurl is paused whenever kMaxBuffered bytes wait unread, so memory per stream stays
// about that bound whatever the body's size. A stream read to its end gives its connection
// back to a process-wide pool of kept-alive handles, which the next Open() reuses; one
// dropped earlier closes its connection (which cancels the request at the peer). Not
// thread-safe.
class HttpStream final : public ByteSource {
 public:
  static constexpr size_t kMaxBuffered = 1 << 20;  // bytes held before pausing the peer

  // Starts `req` (any method; a body as in HttpClient) and waits for the response head.
  // Errors: as HttpClient::Perform; GatewayTimeout past req.stall_timeout.
  static Result<std::unique_ptr<HttpStream>> Open(const HttpRequest& req);
  ~HttpStream() override;

  long Status() const;
  // The final response's headers (names lower-cased); Header() as in HttpResponse.
  const HttpResponse& Head() const;

  // Reads up to buf.size() bytes of the body, returning as soon as any arrived; 0 at its
  // end. Errors: Unavailable when the connection fails midway or the body ends before its
  // Content-Length; GatewayTimeout when no byte came within req.stall_timeout.
  Result<size_t> Read(std::span<char> buf) override;
  // Body bytes still to come when the response gave a Content-Length (minus bytes read).
  std::optional<uint64_t> Size() const override;

 private:
  struct State;
  explicit HttpStream(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace hangar::net

#pragma once
// Request: what a handler sees of an HTTP request. Free of Beast/Asio so handlers compile
// fast; bodies stream through a ByteSource that http/ feeds from the socket.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/byte_source.h"
#include "core/memory_budget.h"
#include "core/principal.h"
#include "core/trace.h"

namespace hangar::http {

enum class Method { Get, Head, Post, Put, Patch, Delete, Options, Other };

// "GET" -> Method::Get; anything unknown -> Method::Other.
Method ParseMethod(std::string_view name);
// Method::Get -> "GET"; Method::Other -> "OTHER" (its real name is in method_name).
std::string_view MethodName(Method m);

// Not thread-safe; owned by one connection for one exchange, handed to one handler.
class Request {
 public:
  Method method = Method::Get;
  std::string method_name;  // as sent, e.g. "PROPFIND" for Method::Other
  std::string target;       // raw request-target, e.g. "/a/b/resolve/main/x%20y?z=1"
  std::string path;         // raw (still percent-encoded) path part of target
  std::string query;        // raw query string without '?', possibly empty
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::vector<std::pair<std::string, std::string>> params;   // route params, raw segments
  std::string request_id;                                    // also sent back as X-Request-Id
  std::string remote;                                        // peer address "ip:port"
  std::string base_url;  // "http://host:port[/prefix]" for absolute URLs (no trailing /)
  Principal principal;   // set by the router's authenticator before the handler runs
  int route_index = -1;  // the matched route's place in Router::Routes(); -1: none matched
  // This request's span: a child of the client's `traceparent` when it sent a valid one,
  // else the root of a new trace. Logs name its trace; calls made for it send Child().
  TraceContext trace;
  // Whom the per-principal body limits count this request against when it has no
  // principal but another credential (a route's own check sets it, e.g. to a ticket's repo).
  std::string quota_key;
  // What the access log shows instead of `target` when set: a route whose URL carries a
  // credential (an LFS ticket) sets it to the target with the credential blanked out.
  std::string log_target;
  std::shared_ptr<ByteSource> body;  // never null; empty when the request has no body
  // What a handler keeps of its body is charged here (ReadBody, ChargeBodyMemory). http/
  // sets it for handlers on a thread of their own, whose number grows with the clients'
  // (limits.handler_memory_bytes); null on the shared pool, whose size bounds what they keep.
  MemoryBudget* body_memory = nullptr;
  std::chrono::steady_clock::duration body_memory_wait{};  // each charge waits this long
  std::unique_ptr<MemoryLease> body_memory_held;           // what this request holds of it

  // Value of the first header `lower_name` ("" when absent).
  std::string_view Header(std::string_view lower_name) const;
  bool HasHeader(std::string_view lower_name) const;
  // Raw (undecoded) value of route parameter `name` ("" when absent).
  std::string_view Param(std::string_view name) const;
  // First value of query key `key`, percent- and '+'-decoded; nullopt when absent.
  // `key[]` is accepted for `key` (hf-api.md §1.6).
  std::optional<std::string> Query(std::string_view key) const;
  // Every value of query key `key` (and `key[]`), decoded, in order.
  std::vector<std::string> QueryAll(std::string_view key) const;
  // Content-Length as a number, when present and valid.
  std::optional<uint64_t> ContentLength() const;
  // The body's length as the head declares it: Content-Length, or 0 when the request has
  // neither Content-Length nor Transfer-Encoding (RFC 9112 §6.3); nullopt when chunked.
  std::optional<uint64_t> DeclaredBodyLength() const;
  // Charges `n` bytes a handler is about to keep to body_memory (nothing without one),
  // waiting up to body_memory_wait for room. Errors: PayloadTooLarge (more than the whole
  // budget), Unavailable (no room in time).
  Result<void> ChargeBodyMemory(uint64_t n);
  // The whole body as a string, charged to body_memory: its Content-Length at once, or
  // else its bytes as they arrive. Errors: PayloadTooLarge
  // past `max_bytes` (at once when Content-Length says so); those of ChargeBodyMemory and
  // of reading the body.
  Result<std::string> ReadBody(size_t max_bytes);
};

// Parses a boolean query value as the HF clients send them: true/True/1 and false/False/0
// (case-insensitive); nullopt for anything else (hf-api.md §1.6).
std::optional<bool> ParseBool(std::string_view v);

// Refuses, from the head alone, a body whose Content-Length is over `max_bytes`: a route's
// head check (Requirement::Also), so a client is not told to send it. A chunked body is
// capped where it is read (Request::ReadBody). Errors: PayloadTooLarge.
Result<void> CheckDeclaredLength(const Request& req, size_t max_bytes);

}  // namespace hangar::http

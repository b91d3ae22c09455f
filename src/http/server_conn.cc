// Server's plain code (server_internal.h): the checks of a request head, the connection's
// body framing, the request object, the body limits taken before a body is read, and the
// access log. Coroutines stay in server.cc.

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/util.h"
#include "http/server_internal.h"

namespace hangar::http {

bool ValidHost(std::string_view h) {
  if (h.size() > 255) return false;
  auto all_of = [](std::string_view s, auto ok) { return std::all_of(s.begin(), s.end(), ok); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::string_view port;
  if (h.starts_with('[')) {
    // An IP literal (RFC 3986 §3.2.2): hex digits, ':' and '.', then an optional :port.
    size_t close = h.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    if (!all_of(h.substr(1, close - 1), [&](char c) {
          return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
                 c == '.';
        })) {
      return false;
    }
    std::string_view rest = h.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return false;
    port = rest.empty() ? rest : rest.substr(1);
  } else {
    // A name or an IPv4 address, with at most one ':' before the port.
    size_t colon = h.find(':');
    if (colon != std::string_view::npos && h.find(':', colon + 1) != std::string_view::npos) {
      return false;
    }
    std::string_view name = h.substr(0, colon);
    if (!all_of(name, [&](char c) {
          return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                 c == '-' || c == '_';
        })) {
      return false;
    }
    port = colon == std::string_view::npos ? std::string_view() : h.substr(colon + 1);
  }
  return port.size() <= 5 && all_of(port, digit);
}

bool OnlyChunked(const bhttp::request_parser<bhttp::empty_body>& hp) {
  const auto& h = hp.get();
  if (h.count(bhttp::field::transfer_encoding) != 1) return false;
  std::string_view v = h[bhttp::field::transfer_encoding];
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return beast::iequals(v, "chunked");
}

std::optional<Error> HeadProblem(const beast::error_code& ec,
                                 const bhttp::request_parser<bhttp::empty_body>& hp) {
  if (ec) {
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return MakeError(ErrorCode::HeadersTooLarge, "request header fields too large");
    }
    bool closed = ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message;
    if (!closed && ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
      return MakeError(ErrorCode::BadRequest, "malformed request: " + ec.message());
    }
    return std::nullopt;
  }
  const auto& h = hp.get();
  if (h.count(bhttp::field::transfer_encoding) && !OnlyChunked(hp)) {
    return MakeError(ErrorCode::BadRequest, "unsupported Transfer-Encoding '" +
                                                std::string(h[bhttp::field::transfer_encoding]) +
                                                "' (only 'chunked' alone)");
  }
  if (h.version() >= 11 && h.count(bhttp::field::host) != 1) {
    return MakeError(ErrorCode::BadRequest, "an HTTP/1.1 request needs exactly one Host");
  }
  if (!ValidHost(h[bhttp::field::host])) {
    // Host goes into absolute URLs (Link, LFS hrefs): only a host[:port] may.
    return MakeError(ErrorCode::BadRequest, "invalid Host header");
  }
  return std::nullopt;
}

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

void Conn::TakeHead(bhttp::request_parser<bhttp::empty_body>&& head, bool expect_continue) {
  body_parser = std::make_unique<bhttp::request_parser<bhttp::buffer_body>>(std::move(head));
  body_parser->body_limit(boost::none);
  body_failed = false;
  raw_left.reset();
  if (!body_parser->is_done() && !body_parser->chunked() && body_parser->content_length()) {
    raw_left = *body_parser->content_length();
  }
  send_continue = expect_continue;
}

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
  auto trace = TraceContext::FromHeader(req->Header("traceparent"));
  req->trace = trace ? std::move(*trace) : TraceContext::New();
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

Response Server::Impl::Refuse(const Admission& admission, const Error& e,
                              const Request& req) const {
  Response r = router.Render(admission.route->api, e, req);
  r.SetHeader("X-Request-Id", req.request_id);
  return r;
}

std::optional<Error> Server::Impl::TakeBodyPlaces(const Conn& c, const Request& req,
                                                  const Admission& admission, BodyPlaces& places) {
  // A caller still anonymous after admission cannot write, so its body has to fit in the
  // read-ahead; so do web forms (pages read their session themselves, and no page takes
  // more than a form). Only ticket routes (LFS transfers), whose ticket the router checked,
  // stream large bodies of callers without an identity to their handlers.
  places.anonymous = req.principal.anonymous;
  const Gate gate = admission.route->need.gate;
  places.capped =
      places.anonymous && (gate != Gate::Ticket || admission.route->api == ApiFamily::Html);
  const size_t bound = options.body_buffer_bytes;
  if (places.capped && c.raw_left && *c.raw_left > bound) {
    return MakeError(
        ErrorCode::PayloadTooLarge,
        "a request body of an unauthenticated caller may have at most " + std::to_string(bound) +
            " bytes (limits.body_buffer_bytes); this one declares " + std::to_string(*c.raw_left));
  }
  if (places.anonymous) {
    if (!anonymous_bodies.TryAcquire(c.ip, options.anonymous_bodies_per_ip)) {
      return MakeError(ErrorCode::TooManyRequests,
                       "too many request bodies in flight from unauthenticated callers at " + c.ip +
                           " (limits.anonymous_bodies_per_ip = " +
                           std::to_string(options.anonymous_bodies_per_ip) + ")");
    }
    places.anonymous_slot = PerKeySlot(anonymous_bodies, c.ip);
  }
  // A signed-in caller's large bodies (or those of one credential of a route's own, such
  // as the tickets of one repo): at most bodies_per_principal at once, counted from the
  // head when its Content-Length already says the body will not fit the read-ahead.
  places.quota_key = places.anonymous ? req.quota_key : "user " + req.principal.name;
  if (!places.quota_key.empty() && c.raw_left && *c.raw_left > bound &&
      !TakePrincipalPlace(places)) {
    return TooManyBodies(places);
  }
  return std::nullopt;
}

bool Server::Impl::TakePrincipalPlace(BodyPlaces& places) {
  if (!streaming_by_principal.TryAcquire(places.quota_key, options.bodies_per_principal)) {
    return false;
  }
  places.principal_slot = PerKeySlot(streaming_by_principal, places.quota_key);
  return true;
}

Error Server::Impl::TooManyBodies(const BodyPlaces& places) const {
  return MakeError(
      ErrorCode::TooManyRequests,
      "too many large request bodies in flight for " + places.quota_key +
          " (limits.bodies_per_principal = " + std::to_string(options.bodies_per_principal) + ")");
}

void Server::Impl::LogAccess(const Request& req, const Response& res, std::optional<uint64_t> sent,
                             Clock::time_point start) const {
  auto ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const std::string& target = req.log_target.empty() ? req.target : req.log_target;
  // Both sides views: a ?: of a literal and a std::string would make a temporary string.
  const std::string_view user =
      req.principal.anonymous ? std::string_view("-") : std::string_view(req.principal.name);
  if (options.access_log_json) {
    // Client bytes (the method, the target) made valid UTF-8: the line must stay JSON.
    boost::json::object line;
    line["request_id"] = req.request_id;
    line["trace_id"] = req.trace.trace_id;
    line["span_id"] = req.trace.span_id;
    line["remote"] = req.remote;
    line["method"] = ValidUtf8(req.method_name);
    line["target"] = ValidUtf8(target);
    line["status"] = res.status;
    line["bytes"] = sent ? *sent : 0;
    line["ms"] = std::round(ms * 100) / 100;
    line["user"] = user;
    Log("access")->info("{}", boost::json::serialize(line));
    return;
  }
  Log("access")->info("[req {}] {} {} {} {} {} {:.2f}ms {} trace={}", req.request_id, req.remote,
                      req.method_name, target, res.status, sent ? *sent : 0, ms, user,
                      req.trace.trace_id);
}

}  // namespace hangar::http

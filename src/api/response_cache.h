#pragma once
// ResponseCache: JSON answers of read routes kept for a moment, each with the generation
// of the state it was computed from (e.g. RegistryService::Generation), so that a change
// makes it stale at once and anything the generation does not count ages out within the
// lifetime. Keyed by the caller too: what a listing shows depends on who asks.

#include <cstdint>
#include <optional>
#include <string>

#include "core/ttl_cache.h"
#include "core/util.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::api {

class ResponseCache {
 public:
  // At most about `capacity` answers of at most `max_body` bytes each (so at most about
  // capacity × max_body bytes, 64 MiB by default, whatever the callers ask: larger answers
  // are not kept), each kept `ttl_ms` at most.
  explicit ResponseCache(size_t capacity = 2048, int64_t ttl_ms = 1000, size_t max_body = 32 << 10)
      : entries_(capacity, ttl_ms), max_body_(max_body) {}

  // The key of `req` for its caller: the target (path and query) and the user.
  static std::string KeyOf(const http::Request& req) {
    return std::to_string(req.principal.user_id) + " " + req.target;
  }
  // The body kept for `key` when it was computed at `generation`.
  std::optional<std::string> Get(const std::string& key, uint64_t generation) {
    std::optional<std::string> out;
    entries_.Visit(key, NowUnixMillis(), [&](const Entry& e) {
      if (e.generation == generation) out = e.body;
    });
    return out;
  }
  void Put(const std::string& key, uint64_t generation, std::string body) {
    if (body.size() > max_body_ || key.size() > 4096) return;
    entries_.Put(key, Entry{generation, std::move(body)}, NowUnixMillis());
  }

 private:
  struct Entry {
    uint64_t generation = 0;
    std::string body;
  };
  TtlCache<Entry> entries_;
  size_t max_body_;
};

// The answer to `req`: from `cache` when it holds one computed at `generation` (read
// before computing, so a change during the computation makes the kept answer stale), else
// compute() (Result<http::Response>), whose 200 JSON body is kept.
template <typename F>
Result<http::Response> CachedJson(ResponseCache& cache, uint64_t generation,
                                  const http::Request& req, F&& compute) {
  std::string key = ResponseCache::KeyOf(req);
  if (auto body = cache.Get(key, generation)) return http::Response::Json(200, std::move(*body));
  Result<http::Response> res = compute();
  if (res && res->status == 200 && !res->stream) cache.Put(key, generation, res->body);
  return res;
}

}  // namespace hangar::api

#pragma once
// Balancer: which backend of a route takes a request (issue 16, docs/gateway.md
// §Choosing a backend). Each request draws one backend at random in proportion to the
// weights of the healthy ones (a canary of weight 10 beside one of 90 takes 10 % of the
// traffic); the retries then go to the others, heaviest first. A backend is ejected after
// kEjectAfter failures in a row (refused connections, 5xx answers, timeouts) and comes back
// when its cooldown has passed or an active health check sees it answer again.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/gateway_store.h"

namespace hangar::services {

// What the balancer knows of one backend URL, as the metrics show it.
struct BackendHealth {
  std::string url;
  bool ejected = false;
  int64_t failures_in_row = 0;
  int64_t ejected_until_ms = 0;  // unix ms; 0 when not ejected
  int64_t ejections = 0;         // since the process started
};

// Thread-safe; one per process. Times are unix milliseconds from `now_ms`.
class Balancer {
 public:
  static constexpr int kEjectAfter = 3;             // failures in a row
  static constexpr int64_t kCooldownMs = 5000;      // the first ejection's length,
  static constexpr int64_t kMaxCooldownMs = 60000;  // doubling per ejection in a row up to this

  explicit Balancer(std::function<int64_t()> now_ms);

  // The order in which to try `backends` (kind "url") for one request: a weighted draw
  // among the healthy ones with weight > 0 first, then the other healthy ones by weight,
  // then the ejected ones by weight (a route whose backends are all ejected still tries).
  std::vector<const db::BackendRecord*> Order(const std::vector<db::BackendRecord>& backends);
  // The outcome of a request (or a health check) to `url`.
  void Succeeded(const std::string& url);
  void Failed(const std::string& url);
  // A health check saw `url` answer: an ejected backend comes back at once.
  void Recovered(const std::string& url);
  std::vector<BackendHealth> Health(const std::vector<db::BackendRecord>& backends);

 private:
  struct State {
    int64_t failures_in_row = 0;
    int64_t ejected_until_ms = 0;
    int64_t ejections_in_row = 0;
    int64_t ejections = 0;
  };
  bool Healthy(const std::string& url, int64_t now);  // mu_ held

  std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::unordered_map<std::string, State> state_;  // by URL; only URLs that ever failed
};

}  // namespace hangar::services

#include "services/gateway/balancer.h"

#include <algorithm>
#include <random>

namespace hangar::services {
namespace {

// A per-thread generator: the draw takes no lock.
std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

Balancer::Balancer(std::function<int64_t()> now_ms) : now_ms_(std::move(now_ms)) {}

bool Balancer::Healthy(const std::string& url, int64_t now) {
  auto it = state_.find(url);
  return it == state_.end() || it->second.ejected_until_ms <= now;
}

std::vector<const db::BackendRecord*> Balancer::Order(
    const std::vector<db::BackendRecord>& backends) {
  std::vector<const db::BackendRecord*> healthy, ejected;
  {
    int64_t now = now_ms_();
    std::lock_guard lock(mu_);
    for (const auto& b : backends) {
      (state_.empty() || Healthy(b.target, now) ? healthy : ejected).push_back(&b);
    }
  }
  auto heaviest = [](const db::BackendRecord* a, const db::BackendRecord* b) {
    return a->weight > b->weight;
  };
  std::stable_sort(healthy.begin(), healthy.end(), heaviest);
  std::stable_sort(ejected.begin(), ejected.end(), heaviest);
  int64_t total = 0;
  for (const auto* b : healthy) total += b->weight;
  if (total > 0 && healthy.size() > 1) {
    int64_t draw = std::uniform_int_distribution<int64_t>(0, total - 1)(Rng());
    for (size_t i = 0; i < healthy.size(); ++i) {
      draw -= healthy[i]->weight;
      if (draw < 0) {
        std::rotate(healthy.begin(), healthy.begin() + static_cast<std::ptrdiff_t>(i),
                    healthy.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        break;
      }
    }
  }
  healthy.insert(healthy.end(), ejected.begin(), ejected.end());
  return healthy;
}

void Balancer::Succeeded(const std::string& url) {
  std::lock_guard lock(mu_);
  auto it = state_.find(url);
  if (it == state_.end()) return;
  // A success after the cooldown closes the ejection for good.
  if (it->second.ejected_until_ms <= now_ms_()) {
    it->second.failures_in_row = 0;
    it->second.ejected_until_ms = 0;
    it->second.ejections_in_row = 0;
  }
}

void Balancer::Failed(const std::string& url) {
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  State& s = state_[url];
  if (s.ejected_until_ms > now) return;  // already out
  if (++s.failures_in_row < kEjectAfter && s.ejections_in_row == 0) return;
  // Ejected: for the cooldown, doubled for each ejection in a row (a backend that fails
  // again at once after coming back stays out longer).
  int64_t cooldown = kCooldownMs << std::min<int64_t>(s.ejections_in_row, 4);
  s.ejected_until_ms = now + std::min(cooldown, kMaxCooldownMs);
  ++s.ejections_in_row;
  ++s.ejections;
}

void Balancer::Recovered(const std::string& url) {
  std::lock_guard lock(mu_);
  auto it = state_.find(url);
  if (it == state_.end()) return;
  it->second.failures_in_row = 0;
  it->second.ejected_until_ms = 0;
  it->second.ejections_in_row = 0;
}

std::vector<BackendHealth> Balancer::Health(const std::vector<db::BackendRecord>& backends) {
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  std::vector<BackendHealth> out;
  for (const auto& b : backends) {
    BackendHealth h;
    h.url = b.target;
    if (auto it = state_.find(b.target); it != state_.end()) {
      h.ejected = it->second.ejected_until_ms > now;
      h.failures_in_row = it->second.failures_in_row;
      h.ejected_until_ms = h.ejected ? it->second.ejected_until_ms : 0;
      h.ejections = it->second.ejections;
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace hangar::services

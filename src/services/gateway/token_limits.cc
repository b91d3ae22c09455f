#include "services/gateway/token_limits.h"

#include <algorithm>
#include <cmath>

namespace hangar::services {

TokenLimits::TokenLimits(std::function<int64_t()> now_ms) : now_ms_(std::move(now_ms)) {}

TokenLimits::Buckets& TokenLimits::Refilled(const std::string& key, int64_t rpm, int64_t tpm,
                                            int64_t now) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxKeys) {
      // Drop the pairs idle for a minute (their buckets are full again: nothing is lost).
      std::erase_if(buckets_, [&](const auto& kv) { return now - kv.second.at_ms >= 60000; });
      if (buckets_.size() >= kMaxKeys) buckets_.erase(buckets_.begin());
    }
    it = buckets_.emplace(key, Buckets{double(rpm), double(tpm), now, rpm, tpm}).first;
  }
  Buckets& b = it->second;
  b.rpm = rpm;
  b.tpm = tpm;
  double minutes = std::max<int64_t>(0, now - b.at_ms) / 60000.0;
  b.requests = std::min<double>(rpm, b.requests + minutes * rpm);
  b.tokens = std::min<double>(tpm, b.tokens + minutes * tpm);
  b.at_ms = now;
  return b;
}

std::optional<int64_t> TokenLimits::Admit(const std::string& key, int64_t rpm, int64_t tpm) {
  if (rpm <= 0 && tpm <= 0) return std::nullopt;
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  Buckets& b = Refilled(key, rpm, tpm, now);
  // Seconds until a bucket holds `need` again at its rate.
  auto wait = [](double have, double need, int64_t per_minute) {
    return static_cast<int64_t>(std::ceil((need - have) * 60.0 / double(per_minute)));
  };
  int64_t seconds = 0;
  if (rpm > 0 && b.requests < 1) seconds = wait(b.requests, 1, rpm);
  if (tpm > 0 && b.tokens <= 0) seconds = std::max(seconds, wait(b.tokens, 1, tpm));
  if (seconds > 0) return seconds;
  if (rpm > 0) b.requests -= 1;
  return std::nullopt;
}

void TokenLimits::Charge(const std::string& key, int64_t tpm, int64_t tokens) {
  if (tpm <= 0 || tokens <= 0) return;
  int64_t now = now_ms_();
  std::lock_guard lock(mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return;  // dropped since its Admit
  Buckets& b = Refilled(key, it->second.rpm, tpm, now);
  b.tokens -= double(tokens);
}

}  // namespace hangar::services

#include "core/memory_budget.h"

namespace hangar {

bool MemoryBudget::TryCharge(uint64_t n) {
  uint64_t used = used_.load();
  do {
    if (n > limit_ || used > limit_ - n) return false;
  } while (!used_.compare_exchange_weak(used, used + n));
  return true;
}

Result<void> MemoryBudget::Charge(uint64_t n, std::chrono::steady_clock::time_point deadline) {
  if (n > limit_) {
    return MakeError(ErrorCode::PayloadTooLarge, "needs " + std::to_string(n) +
                                                     " bytes of memory, more than " + what_ + " (" +
                                                     std::to_string(limit_) + ")");
  }
  std::unique_lock lock(mu_);
  // TryCharge runs under mu_ and Release notifies under it, so no wake-up is lost.
  while (!TryCharge(n)) {
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (TryCharge(n)) break;
      return MakeError(ErrorCode::Unavailable,
                       "the server holds as much memory for request "
                       "bodies as it may (" +
                           what_ + "); try again shortly");
    }
  }
  return {};
}

void MemoryBudget::Release(uint64_t n) {
  if (n == 0) return;
  used_ -= n;
  std::lock_guard lock(mu_);
  freed_.notify_all();
}

Result<void> MemoryLease::Grow(uint64_t n) {
  HANGAR_TRY(budget_.Charge(n, std::chrono::steady_clock::now() + wait_));
  held_ += n;
  return {};
}

}  // namespace hangar

#pragma once
// MemoryBudget: a byte count that holders of large buffers charge before they allocate, so
// that many such buffers at once wait their turn instead of growing RSS without bound
// (issue 13: request bodies read ahead by the I/O layer, commit bodies a handler keeps).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/result.h"

namespace hangar {

// Thread-safe. Charges never exceed limit() together.
class MemoryBudget {
 public:
  // `limit`: bytes; `what` names the budget in messages (a config key, say).
  MemoryBudget(uint64_t limit, std::string what) : limit_(limit), what_(std::move(what)) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Takes `n` bytes; false (nothing taken) when they do not fit now. Never blocks.
  bool TryCharge(uint64_t n);
  // Takes `n` bytes, blocking the calling thread until they fit or `deadline` passes.
  // Errors: PayloadTooLarge when n > limit() (it can never fit); Unavailable at the deadline.
  Result<void> Charge(uint64_t n, std::chrono::steady_clock::time_point deadline);
  // Gives back `n` bytes taken before, and wakes the threads Charge() holds.
  void Release(uint64_t n);

  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(); }

 private:
  const uint64_t limit_;
  const std::string what_;
  std::atomic<uint64_t> used_{0};
  std::mutex mu_;  // with freed_: the waits of Charge()
  std::condition_variable freed_;
};

// Bytes of a MemoryBudget held until this goes; grows as its holder's buffer does.
class MemoryLease {
 public:
  // `wait`: how long each Grow() may wait for room.
  MemoryLease(MemoryBudget& budget, std::chrono::steady_clock::duration wait)
      : budget_(budget), wait_(wait) {}
  MemoryLease(const MemoryLease&) = delete;
  MemoryLease& operator=(const MemoryLease&) = delete;
  ~MemoryLease() { budget_.Release(held_); }

  // Takes `n` more bytes (see MemoryBudget::Charge for the errors).
  Result<void> Grow(uint64_t n);
  uint64_t held() const { return held_; }

 private:
  MemoryBudget& budget_;
  const std::chrono::steady_clock::duration wait_;
  uint64_t held_ = 0;
};

}  // namespace hangar

#pragma once
// Progress: a one-line progress bar on stderr (bytes, rate, ETA) for `hangar upload` and
// `hangar download`, and the byte-size helpers their flags use.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace hangar::client {

// Counts bytes of one phase at a time ("hashing", "uploading", ...). Add() is thread-safe
// and cheap (one atomic add); when enabled, a thread redraws the line 4 times a second.
// When disabled every call is a no-op apart from the counting.
class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Begins a phase of `total` bytes (ends the previous one).
  void Start(std::string label, uint64_t total);
  // `n` more bytes done (negative: a failed attempt's bytes taken back).
  void Add(int64_t n) { done_.fetch_add(n, std::memory_order_relaxed); }
  // Draws the final state of the phase and ends its line.
  void Finish();
  int64_t Done() const { return done_.load(std::memory_order_relaxed); }

 private:
  void Draw(bool final_line);
  void Loop();

  bool enabled_;
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string label_;
  uint64_t total_ = 0;
  bool active_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;
};

// "1.5 GiB", "64.0 MiB", "512 B".
std::string FormatBytes(double bytes);

// "64M", "64MiB", "1G", "512k", "1048576" (binary multiples; K, M, G, T; optional "B" or
// "iB"). nullopt for anything else or zero.
std::optional<uint64_t> ParseByteSize(std::string_view s);

}  // namespace hangar::client

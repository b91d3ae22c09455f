#include "client/progress.h"

#include <cctype>
#include <cstdio>

namespace hangar::client {

Progress::Progress(bool enabled) : enabled_(enabled) {
  if (enabled_) thread_ = std::thread([this] { Loop(); });
}

Progress::~Progress() {
  Finish();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::Start(std::string label, uint64_t total) {
  Finish();
  std::lock_guard lock(mu_);
  label_ = std::move(label);
  total_ = total;
  done_.store(0);
  start_ = std::chrono::steady_clock::now();
  active_ = true;
}

void Progress::Finish() {
  std::lock_guard lock(mu_);
  if (!active_) return;
  active_ = false;
  if (enabled_) {
    Draw(true);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
}

void Progress::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250));
    if (active_ && !stop_) Draw(false);
  }
}

// Called with mu_ held.
void Progress::Draw(bool final_line) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double done = static_cast<double>(std::max<int64_t>(0, done_.load()));
  double rate = secs > 0.05 ? done / secs : 0;
  char eta[32] = "--:--";
  if (final_line) {
    std::snprintf(eta, sizeof eta, "%.1fs", secs);
  } else if (rate > 0 && total_ >= done) {
    auto left = static_cast<long>((static_cast<double>(total_) - done) / rate);
    std::snprintf(eta, sizeof eta, "ETA %ld:%02ld", left / 60, left % 60);
  }
  int pct = total_ > 0 ? static_cast<int>(100.0 * done / static_cast<double>(total_)) : 100;
  if (pct > 100) pct = 100;
  constexpr int kWidth = 24;
  std::string bar(kWidth, ' ');
  for (int i = 0; i < kWidth * pct / 100; ++i) bar[i] = '#';
  std::fprintf(stderr, "\r%-10s [%s] %3d%% %10s / %-10s %10s/s  %-12s", label_.c_str(), bar.c_str(),
               pct, FormatBytes(done).c_str(), FormatBytes(static_cast<double>(total_)).c_str(),
               FormatBytes(rate).c_str(), eta);
  std::fflush(stderr);
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, kUnits[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[u]);
  }
  return buf;
}

std::optional<uint64_t> ParseByteSize(std::string_view s) {
  size_t i = 0;
  uint64_t n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (n > (UINT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string_view unit = s.substr(i);
  int shift = 0;
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'B':
        shift = 0;
        break;
      default:
        return std::nullopt;
    }
    std::string_view rest = unit.substr(1);
    if (unit[0] == 'B' || unit[0] == 'b') {
      if (!rest.empty()) return std::nullopt;
    } else if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) {
      return std::nullopt;
    }
  }
  if (shift > 0 && n > (UINT64_MAX >> shift)) return std::nullopt;
  n <<= shift;
  if (n == 0) return std::nullopt;
  return n;
}

}  // namespace hangar::client

#pragma once
// StopOnSignal: turns SIGINT, SIGTERM and SIGHUP into a stop request for long CLI commands
// (import, maintain), so an interrupted command kills its git children (which run in
// process groups of their own, out of reach of the terminal's ^C) and cleans up.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <stop_token>
#include <thread>

namespace hangar::cli {

// Turns SIGINT, SIGTERM and SIGHUP into a stop request while it lives, so an interrupted
// import kills git and cleans up instead of leaving git running. Construct before any
// thread starts (threads inherit the blocked mask). SIGUSR2 wakes the watcher to end it.
class StopOnSignal {
 public:
  StopOnSignal() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    watcher_ = std::thread([this] {
      for (;;) {
        int s = sigwaitinfo(&set_, nullptr);
        if (s == SIGUSR2 && done_.load()) return;
        if (s > 0 && s != SIGUSR2) {
          signal_ = s;
          stop_.request_stop();
        }
      }
    });
  }
  ~StopOnSignal() {
    done_ = true;
    pthread_kill(watcher_.native_handle(), SIGUSR2);
    watcher_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  std::stop_token token() const { return stop_.get_token(); }
  int signal() const { return signal_.load(); }  // 0 = none came

 private:
  sigset_t set_, old_;
  std::stop_source stop_;
  std::atomic<bool> done_{false};
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

}  // namespace hangar::cli

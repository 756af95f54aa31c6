#pragma once
// One per server, shared by a process's connections (db::CircuitBreakers): after a few calls
// in a row got no answer from the server at all (a connect that failed or timed out, a statement
// that waited out the client's read timeout on a hung server), every connection skips it: with
// no other server to read from, database-bound requests fail fast with a 503 instead of each
// waiting out its time budget, until a probe (the snapshot refresher's next load) gets an
// answer from it. Errors the server itself answers (a statement timeout, a lock wait) show it
// alive and do not count, nor does a connection closed at once (a restart, KILL).
#include <atomic>
#include <chrono>
#include <cstdint>

namespace connector::db {

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  // Consecutive calls without an answer that open the breaker.
  static constexpr std::uint32_t kOpenAfter = 3;
  // While open, one caller in this long is let through as a trial (half-open), so recovery does
  // not wait for the probe alone.
  static constexpr auto kTrialEvery = std::chrono::milliseconds(250);

  bool open() const { return open_.load(std::memory_order_relaxed); }

  // True when a call may go to the server: closed, or open and this caller is the trial.
  bool allow(Clock::time_point now = Clock::now()) {
    if (!open()) return true;
    auto due = next_trial_.load(std::memory_order_relaxed);
    const auto now_ticks = now.time_since_epoch().count();
    return now_ticks >= due &&
           next_trial_.compare_exchange_strong(
               due, (now + kTrialEvery).time_since_epoch().count(), std::memory_order_relaxed);
  }

  void record_answer() {
    failures_.store(0, std::memory_order_relaxed);
    open_.store(false, std::memory_order_relaxed);
  }

  void record_no_answer(Clock::time_point now = Clock::now()) {
    if (failures_.fetch_add(1, std::memory_order_relaxed) + 1 >= kOpenAfter &&
        !open_.exchange(true, std::memory_order_relaxed)) {
      next_trial_.store((now + kTrialEvery).time_since_epoch().count(), std::memory_order_relaxed);
    }
  }

 private:
  std::atomic<std::uint32_t> failures_{0};
  std::atomic<bool> open_{false};
  std::atomic<Clock::rep> next_trial_{0};
};

}  // namespace connector::db
